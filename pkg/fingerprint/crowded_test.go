package fingerprint

import (
	"strings"
	"testing"
	"time"
)

// Pages crowded with one pattern's anchor literal and free of the bytes
// that end its windows (no '>' and no quote after the literal): every try
// or window around one occurrence reaches the end of the page. Before
// windows were merged, each occurrence read the rest of the page again:
// pages of 400 KB so built for single patterns of the built-in database
// took up to 45 s (fixed anchor) and 98 s (window anchor); this test's
// page took 2.0 s against 54 ms for the page with 4 occurrences.

const crowdedDB = `{
	"Fixed": {"html": "/wp-content/themes/astra/[^\"'?]+\\?ver=([\\d.]+)\\;version:\\1"},
	"Window": {"html": "<form[^>]+action=\"https://www\\.aweber\\.com/scripts/addlead\\.pl\"[^>]*data-ver=([\\d.]+)\\;version:\\1"}
}`

// crowdedPage is about size bytes holding n occurrences of each anchor,
// spread evenly, with the other literals the patterns need at its start;
// tail ends it.
func crowdedPage(size, n int, tail string) string {
	lits := `action="https://www.aweber.com/scripts/addlead.pl" /wp-content/themes/astra/`
	unit := lits + strings.Repeat("x", max(size/n-len(lits), 1))
	return "?ver= data-ver= <form " + strings.Repeat(unit, n) + tail
}

// TestCrowdedAnchorsMatchNaive: merging windows keeps the answers, with
// the match at the end of the page, just after the crowd, or nowhere.
func TestCrowdedAnchorsMatchNaive(t *testing.T) {
	for _, tail := range []string{"", `?ver=1.2 data-ver=3.4`, `"?ver=1.2>`} {
		for _, n := range []int{1, 4, 300} {
			ds := detect(t, crowdedDB, &Evidence{HTML: crowdedPage(30<<10, n, tail)}) // detect compares with the naive loop
			if tail == `?ver=1.2 data-ver=3.4` {
				for name, v := range map[string]string{"Fixed": "1.2", "Window": "3.4"} {
					if d, ok := find(ds, name); !ok || d.Version != v {
						t.Errorf("%d occurrences: %s: got %v", n, name, ds)
					}
				}
			}
		}
	}
}

// crowdedPages are pages of 400 KB with 4 and with 4,000 occurrences of
// each anchor: the first costs a few passes over the page, which the
// second must not exceed by much.
func crowdedPages() (e *Engine, few, many *Evidence) {
	db, err := ParseTechnologies([]byte(crowdedDB))
	if err != nil {
		panic(err)
	}
	var list []*Technology
	for _, tech := range db {
		list = append(list, tech)
	}
	return NewEngine(NewDB(list...)), &Evidence{HTML: crowdedPage(400<<10, 4, "")}, &Evidence{HTML: crowdedPage(400<<10, 4000, "")}
}

// TestCrowdedAnchorsCostLittle bounds the crowded page's time at 10 times
// the time of the page with 4 occurrences (generously: the benchmark
// reports the ratio).
func TestCrowdedAnchorsCostLittle(t *testing.T) {
	if testing.Short() {
		t.Skip("timing")
	}
	e, few, many := crowdedPages()
	base, got := bestOf(3, e, few), bestOf(3, e, many)
	t.Logf("4,000 occurrences: %v, 4: %v (%.1fx)", got, base, float64(got)/float64(base))
	if got > 10*base {
		t.Errorf("page with 4,000 occurrences scans in %v, with 4 in %v: more than 10 times", got, base)
	}
}

// BenchmarkCrowdedAnchors reports the time of the page with 4,000
// occurrences of each anchor against the page of the same size with 4,
// alternating in one loop.
func BenchmarkCrowdedAnchors(b *testing.B) {
	e, few, many := crowdedPages()
	var took [2]time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j, ev := range []*Evidence{few, many} {
			start := time.Now()
			e.Analyze(ev)
			took[j] += time.Since(start)
		}
	}
	b.ReportMetric(float64(took[1])/float64(took[0]), "crowded-ratio")
}
