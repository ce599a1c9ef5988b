package fingerprint

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

// The benchmark corpus: 120 pages of 50-500 KB over 17 platforms. Every
// tenth holds a U+212A or U+017F in its text, as pages on physics or in
// old print do, so that the slowest page reported would show a regression
// on them.
var corpus = sync.OnceValue(func() []corpusPage {
	pages := buildCorpus(120, 50, 500, 1)
	for i := 9; i < len(pages); i += 10 {
		plant, name := withSign, " + U+212A"
		if i%20 == 19 {
			plant, name = withLongS, " + U+017F"
		}
		pages[i].ev, pages[i].platform = *reparse(&pages[i], plant), pages[i].platform+name
	}
	return pages
})

// pageTimes keeps each corpus page's best time, to name the slowest.
type pageTimes []time.Duration

func (t pageTimes) add(i int, d time.Duration) {
	if t[i] == 0 || d < t[i] {
		t[i] = d
	}
}

// report adds the slowest page's time and the highest time per byte of
// HTML as metrics, and names those pages on a line of their own.
func (t pageTimes) report(b *testing.B, pages []corpusPage) {
	perMB := func(i int) float64 { return t[i].Seconds() * 1e3 / (float64(len(pages[i].ev.HTML)) / 1e6) }
	slow, dense := 0, 0
	for i := range t {
		if t[i] > t[slow] {
			slow = i
		}
		if t[i] > 0 && (t[dense] == 0 || perMB(i) > perMB(dense)) {
			dense = i
		}
	}
	if t[slow] == 0 {
		return
	}
	name := func(i int) string {
		return fmt.Sprintf("#%d %s (%d KB)", i, pages[i].platform, len(pages[i].ev.HTML)>>10)
	}
	b.ReportMetric(t[slow].Seconds()*1e3, "slowest-page-ms")
	b.ReportMetric(perMB(dense), "worst-ms/MB")
	b.Logf("slowest page: %s %.2f ms; costliest per byte: %s %.2f ms/MB", name(slow), t[slow].Seconds()*1e3, name(dense), perMB(dense))
}

// TestEngineMatchesNaiveOnCorpus checks the engine against the naive loop
// on realistic pages with the built-in database (smaller pages, to stay
// fast: the naive loop is what is slow).
func TestEngineMatchesNaiveOnCorpus(t *testing.T) {
	_, e := builtinEngine(t)
	found := 0
	for _, p := range buildCorpus(len(platforms), 8, 16, 2) {
		got, want := e.Analyze(&p.ev), naiveAnalyze(e, &p.ev)
		if !equalDetections(got, want) {
			t.Errorf("%s page: engine %s, naive %s", p.platform, describe(got), describe(want))
		}
		found += len(got)
	}
	t.Logf("%d detections over %d pages", found, len(platforms))
}

// BenchmarkEngineVsNaive reports the engine's pages/s on the corpus with
// the built-in database and, measured in the same run on a sample of the
// same pages, the naive loop's pages/s and the ratio between them.
func BenchmarkEngineVsNaive(b *testing.B) {
	pages := corpus()
	start := time.Now()
	db, err := loadFS(builtinFS, "data") // not the cached Builtin: this times the load
	if err != nil {
		b.Fatal(err)
	}
	e := NewEngine(db)
	load := time.Since(start)
	base := naiveBaseline(e, pages)

	times := make(pageTimes, len(pages))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		e.Analyze(&pages[i%len(pages)].ev)
		times.add(i%len(pages), time.Since(start))
	}
	b.StopTimer()
	perPage := b.Elapsed().Seconds() / float64(b.N)
	times.report(b, pages)
	b.ReportMetric(1/perPage, "pages/s")
	b.ReportMetric(1/base.naive, "naive-pages/s")
	b.ReportMetric(base.naive/base.engine, "ratio")
	b.ReportMetric(float64(load.Microseconds())/1000, "load-ms")
	b.ReportMetric(float64(db.Report().Technologies), "technologies")
}

type baseline struct{ naive, engine float64 } // seconds per page on the sample

var (
	baselineOnce sync.Once
	baselineVal  baseline
)

// naiveBaseline times the naive loop and the engine on every 24th page
// (5 pages of varied sizes and platforms): the naive loop takes seconds
// per page. Measured once per process.
func naiveBaseline(e *Engine, pages []corpusPage) baseline {
	baselineOnce.Do(func() {
		var sample []*Evidence
		for i := 0; i < len(pages); i += 24 {
			sample = append(sample, &pages[i].ev)
		}
		timeIt := func(f func(*Evidence) []Detection, minDur time.Duration) float64 {
			n, start := 0, time.Now()
			for time.Since(start) < minDur || n == 0 {
				for _, ev := range sample {
					f(ev)
				}
				n += len(sample)
			}
			return time.Since(start).Seconds() / float64(n)
		}
		baselineVal.naive = timeIt(func(ev *Evidence) []Detection { return naiveAnalyze(e, ev) }, 0)
		baselineVal.engine = timeIt(e.Analyze, 500*time.Millisecond)
	})
	return baselineVal
}

// BenchmarkEngineScale grows the database to 3,000 technologies with
// generated ones (each with its own literals, shaped like real
// definitions) and reports how per-page time grows against database size.
func BenchmarkEngineScale(b *testing.B) {
	pages := corpus()
	small, err := Builtin()
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	big := Merge(small, syntheticDB(b, 3000-len(small.techs)))
	eBig := NewEngine(big)
	load := time.Since(start)
	eSmall := NewEngine(small)

	perPage := func(e *Engine) float64 {
		n, start := 0, time.Now()
		for time.Since(start) < 300*time.Millisecond {
			e.Analyze(&pages[n%len(pages)].ev)
			n++
		}
		return time.Since(start).Seconds() / float64(n)
	}
	smallPer := perPage(eSmall)

	times := make(pageTimes, len(pages))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		eBig.Analyze(&pages[i%len(pages)].ev)
		times.add(i%len(pages), time.Since(start))
	}
	b.StopTimer()
	bigPer := b.Elapsed().Seconds() / float64(b.N)
	times.report(b, pages)
	b.ReportMetric(1/bigPer, "pages/s")
	b.ReportMetric(float64(len(big.techs))/float64(max(1, len(small.techs))), "db-size-ratio")
	b.ReportMetric(bigPer/smallPer, "time-ratio")
	b.ReportMetric(float64(load.Microseconds())/1000, "load-ms")
}

// syntheticDB makes n technologies in the shapes real definitions take,
// each named for a made-up product so its literals are its own.
func syntheticDB(tb testing.TB, n int) *DB {
	r := rand.New(rand.NewPCG(9, 9))
	defs := map[string]map[string]any{}
	for i := 0; i < n; i++ {
		prod := fmt.Sprintf("%s%s%d", p0(r), []string{"ly", "kit", "hub", "io", "cart", "press"}[r.IntN(6)], i)
		d := map[string]any{"cats": []int{1 + r.IntN(100)}, "website": "https://" + prod + ".example"}
		switch r.IntN(6) {
		case 0:
			d["scriptSrc"] = []string{`/` + prod + `(?:\.min)?\.js(?:\?ver=([\d.]+))?\;version:\1`, `cdn\.` + prod + `\.example/`}
			d["html"] = `<script[^>]+src=["'][^"']*` + prod + `[^"']*\.js`
		case 1:
			d["meta"] = map[string]any{"generator": `^` + prod + `(?: v?([\d.]+))?\;version:\1`}
			d["html"] = `<link[^>]+href=["'][^"']*/` + prod + `/`
		case 2:
			d["headers"] = map[string]any{"X-" + prod + "-Version": `([\d.]+)\;version:\1`, "Server": `^` + prod}
			d["cookies"] = map[string]any{prod + "_session": ""}
		case 3:
			d["html"] = []string{`<div[^>]+class=["'][^"']*\b` + prod + `-widget`, `<!-- ` + prod + ` v([\d.]+)\;version:\1`}
			d["scripts"] = prod + `\.init\(`
		case 4:
			d["scriptSrc"] = `//(?:www\.)?` + prod + `\.(?:com|io|example)/(?:sdk|widget)\.js`
			d["implies"] = "jQuery"
		default:
			d["text"] = `Powered by ` + prod
			d["css"] = `\.` + prod + `-(?:header|footer)\{`
		}
		defs["Synthetic "+prod] = d
	}
	data, err := json.Marshal(defs)
	if err != nil {
		tb.Fatal(err)
	}
	techs, err := ParseTechnologies(data)
	if err != nil {
		tb.Fatal(err)
	}
	var list []*Technology
	for _, t := range techs {
		list = append(list, t)
	}
	return NewDB(list...)
}
