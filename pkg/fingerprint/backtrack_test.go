package fingerprint

import (
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// evil backtracks catastrophically on a run of x's followed by z: the
// look-behind fails after every way of splitting the run between the two
// x+, and there are 2^n of them. Its RE2 stand-in, (?:x+x+)+z, matches
// such a run, so regexp2 does run.
const evilTechs = `{
	"Evil": {"cats": [12], "scripts": "(?:x+x+)+(?<!x)z", "html": "(?:x+x+)+(?<!x)z"},
	"Look": {"cats": [12], "scripts": "look(?=ahead)"},
	"Marker": {"cats": [12], "scripts": "marker-one", "html": "marker-two"}
}`

func evilRun(n int) string { return strings.Repeat("x", n) + "z" }

// TestBacktrackingEndsWithinItsBudget: a hostile page cannot make a
// look-around pattern run away, and the rest of the scan goes on.
func TestBacktrackingEndsWithinItsBudget(t *testing.T) {
	db := fixtureDB(t, evilTechs)
	e := NewEngine(db)
	var evil *pattern
	for _, p := range patternsOf(mustLookup(t, db, "evil")) {
		evil = p
	}
	// The pattern really explodes: unbounded, one run would take hours.
	start := time.Now()
	if _, err := evil.backtrack.MatchString(evilRun(40)); err == nil {
		t.Fatal("want the crafted text to exceed the match timeout")
	}
	if d := time.Since(start); d > 5*backtrackMatchTimeout {
		t.Errorf("one run took %v; its timeout is %v", d, backtrackMatchTimeout)
	}

	// One crafted text, and the scan still finds the others.
	start = time.Now()
	ds := e.Analyze(&Evidence{HTML: "<p>" + evilRun(40) + "</p> marker-two"})
	if d := time.Since(start); d > time.Second {
		t.Errorf("the page took %v", d)
	}
	if len(ds) != 1 || ds[0].Name != "Marker" {
		t.Errorf("want Marker alone, got %v", ds)
	}

	// A thousand crafted texts: the page budget stops them, where the
	// per-run timeout alone would take over 20 s. The look-around pattern
	// after them does not run either: the page has spent its budget.
	scripts := make([]string, 1000)
	for i := range scripts {
		scripts[i] = evilRun(40)
	}
	scripts = append(scripts, "marker-one", "lookahead")
	start = time.Now()
	ds = e.Analyze(&Evidence{Scripts: scripts})
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the page took %v; the budget is %v a page", d, backtrackPageBudget)
	}
	if len(ds) != 1 || ds[0].Name != "Marker" {
		t.Errorf("want Marker alone, got %v", ds)
	}
	// The budget is per page: the next page runs look-arounds again.
	if ds := e.Analyze(&Evidence{Scripts: []string{"lookahead"}}); len(ds) != 1 || ds[0].Name != "Look" {
		t.Errorf("want Look, got %v", ds)
	}
}

func mustLookup(t *testing.T, db *DB, slug string) *Technology {
	t.Helper()
	tech, ok := db.Lookup(slug)
	if !ok {
		t.Fatalf("no %s", slug)
	}
	return tech
}

// TestBacktrackingLongText: in a text longer than regexp2 may read whole,
// it reads windows around the RE2 stand-in's matches, so a match deep in a
// large page is found with its version, and a stand-in match the
// look-around refuses stays refused.
func TestBacktrackingLongText(t *testing.T) {
	const js = `{"Leaflet": {"cats": [12], "html": "<link[^>]+leaflet(?=[.-])(?:[.-]([\\d.]+\\d))?[^>]*\\.css\\;version:\\1"}}`
	filler := strings.Repeat(`<p class="text">Nothing to see in this paragraph.</p>`+"\n", 20000)
	if len(filler) < 30*backtrackMaxInput {
		t.Fatalf("filler of %d bytes is too short", len(filler))
	}
	refused := `<link rel="stylesheet" href="/css/leafletstyle.css">`
	found := `<link rel="stylesheet" href="/css/leaflet-1.9.4.min.css">`
	if ds := detect(t, js, &Evidence{HTML: filler + refused + filler}); len(ds) != 0 {
		t.Errorf("want nothing, got %v", ds)
	}
	ds := detect(t, js, &Evidence{HTML: filler + refused + filler + found + filler})
	if len(ds) != 1 || ds[0].Version != "1.9.4" {
		t.Errorf("want Leaflet 1.9.4, got %v", ds)
	}
}

func TestBacktrackWindows(t *testing.T) {
	db := fixtureDB(t, `{"A": {"html": "ab(?!c)"}}`)
	re := patternsOf(mustLookup(t, db, "a"))[0].re
	short := "xx ab yy"
	if w := backtrackWindows(re, short); len(w) != 1 || w[0] != (litSpan{0, len(short)}) {
		t.Errorf("a short text is read whole: %v", w)
	}
	if w := backtrackWindows(re, "no match here"); w != nil {
		t.Errorf("no stand-in match, no window: %v", w)
	}
	pad := strings.Repeat("-", backtrackMaxInput)
	long := pad + "ab" + pad + "ab ab" + pad
	w := backtrackWindows(re, long)
	if len(w) != 2 || w[0].end-w[0].pos != 2+2*backtrackContext || w[1].pos > len(pad)*2+2 || w[1].end < len(pad)*2+7 {
		t.Errorf("windows %v", w)
	}
	many := strings.Repeat("ab"+strings.Repeat(".", 2*backtrackContext), 1000)
	total := 0
	w = backtrackWindows(re, many)
	for _, s := range w {
		total += s.end - s.pos
	}
	if len(w) > backtrackMaxWindows || total > backtrackMaxInput {
		t.Errorf("%d windows, %d bytes: past the bounds", len(w), total)
	}
	// Windows end on rune boundaries.
	multi := strings.Repeat("é", backtrackMaxInput) + "ab" + strings.Repeat("é", backtrackMaxInput)
	for _, s := range backtrackWindows(re, multi) {
		if !strings.HasPrefix(multi[s.pos:], "é") || !strings.HasPrefix(multi[s.end:], "é") {
			t.Errorf("window %v cuts a rune", s)
		}
	}
}

// TestBacktrackingConcurrent: scans share an engine, and its look-around
// patterns, across goroutines (run with -race).
func TestBacktrackingConcurrent(t *testing.T) {
	e := NewEngine(loadCommunity(t))
	pages := []Evidence{
		{ScriptSrc: []string{"https://code.jquery.com/jquery-3.7.1.min.js", "/lib/leaflet-1.9.4.min.js"}},
		{HTML: `<div data-v-7ba5bd90 class="card"><link href="/css/leaflet.css">`},
		{ScriptSrc: []string{"/static/js/jquery-ui.min.js"}},
	}
	want := make([][]Detection, len(pages))
	for i := range pages {
		want[i] = e.Analyze(&pages[i])
	}
	var wg sync.WaitGroup
	for g := range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := range 200 {
				p := (g + i) % len(pages)
				if got := e.Analyze(&pages[p]); !equalDetections(got, want[p]) {
					t.Errorf("page %d: %v, want %v", p, got, want[p])
					return
				}
			}
		})
	}
	wg.Wait()
}
