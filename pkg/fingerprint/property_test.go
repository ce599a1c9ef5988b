package fingerprint

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"
)

// The prefilter must never change an answer: over generated databases and
// pages the engine must return exactly what the naive loop returns.

var propWords = []string{"wp-content", "jquery", "nginx", "react", "data-app", "gen", "Shop", "cdn",
	"min", "js", "ver", "script", "link", "meta", "kit", "sso", "Kit", "SSO", "éclair", "日本", "\u212aelvin"}

// A piece of a generated regex and a text it matches (sometimes not,
// where context decides, as with \b and ^).
type propPiece struct {
	re      string
	witness []string
}

var propPieces = []propPiece{
	{`[^>]*`, []string{"", "a b", `x="1"`}}, {`[^"']+`, []string{"abc", "<p>"}}, {`.*`, []string{"", "any thing"}},
	{`\s*`, []string{"", " ", "\n\t"}}, {`\d+`, []string{"7", "2024"}}, {`([\d.]+)`, []string{"1.2.3", "10"}},
	{`(?:\.min)?`, []string{"", ".min", ".MIN"}}, {`[.-]`, []string{".", "-"}}, {`\b`, []string{""}}, {`^`, []string{""}},
	{`$`, []string{""}}, {`\w+`, []string{"abc", "x_1"}}, {`.{0,5}`, []string{"", "ab", "abcde"}},
	{`[a-z]{2,4}`, []string{"ab", "abcd"}}, {`(?:x|yz)`, []string{"x", "yz"}}, {`/`, []string{"/"}}, {`"`, []string{`"`}},
	{`=`, []string{"="}}, {`<`, []string{"<"}}, {`(?s:.)`, []string{"\n", "é"}}, {`(?m)^`, []string{""}},
	{`[^<]+?`, []string{"ab", "x y"}}, {`(?:[^>]*\s)?`, []string{"", "a "}},
	// Lengths in the folded text: a case-sensitive U+212A, and a class
	// holding U+017F and U+212A among wider runes.
	{`(?-i:\x{212A}|s)`, []string{"\u212a", "s"}}, {`[\x{100}-\x{3000}]{1,3}`, []string{"\u017f", "\u212a\u212a", "āſ"}},
}

// propPattern returns a pattern string and texts that (mostly) match it.
func propPattern(r *rand.Rand) (string, func() string) {
	var b strings.Builder
	var wit []func() string
	n := 1 + r.IntN(5)
	group := false
	for i := 0; i < n; i++ {
		if r.IntN(2) == 0 {
			w := propWords[r.IntN(len(propWords))]
			if r.IntN(3) == 0 {
				w = strings.ToUpper(w)
			}
			if r.IntN(4) == 0 {
				w2 := propWords[r.IntN(len(propWords))]
				b.WriteString("(?:" + w + "|" + w2 + ")")
				wit = append(wit, func() string { return []string{w, strings.ToLower(w2)}[r.IntN(2)] })
				continue
			}
			b.WriteString(w)
			wit = append(wit, func() string { return strings.ToLower(w) })
			continue
		}
		p := propPieces[r.IntN(len(propPieces))]
		group = group || strings.HasPrefix(p.re, "([")
		b.WriteString(p.re)
		wit = append(wit, func() string { return p.witness[r.IntN(len(p.witness))] })
	}
	if group {
		if r.IntN(2) == 0 {
			b.WriteString(`\;version:\1`)
		} else {
			b.WriteString(`\;version:\1?v\1:none`)
		}
	}
	if r.IntN(4) == 0 {
		fmt.Fprintf(&b, `\;confidence:%d`, 10+r.IntN(90))
	}
	return b.String(), func() string {
		var w strings.Builder
		for _, f := range wit {
			w.WriteString(f())
		}
		return w.String()
	}
}

var propTokens = []string{" ", "\n", "<", ">", `"`, "'", "=", "/", ".", "-", "1.2.3", "10", "x", "yz",
	"\xff", "é", "<link ", "<script src=\"", "ver=", "K", "s"}

// propHazards fold to ASCII letters under (?i); a few pages get them.
var propHazards = []string{"\u212a", "\u017f"}

func propText(r *rand.Rand, n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		if r.IntN(3) == 0 {
			w := propWords[r.IntN(len(propWords))]
			switch r.IntN(4) {
			case 0:
				w = strings.ToUpper(w)
			case 1:
				w = foldRunes(w, r)
			case 2:
				w = strings.Map(func(c rune) rune {
					if r.IntN(2) == 0 {
						return unicode.ToUpper(c)
					}
					return c
				}, w)
			}
			b.WriteString(w)
			continue
		}
		b.WriteString(propTokens[r.IntN(len(propTokens))])
	}
	if r.IntN(20) == 0 {
		b.WriteString(propHazards[r.IntN(len(propHazards))])
	}
	return b.String()
}

// propDB generates a database and, per evidence kind, texts that match
// its patterns, to plant in pages.
func propDB(t *testing.T, r *rand.Rand, techs int) (*DB, map[string][]func() string) {
	t.Helper()
	defs := map[string]map[string]any{}
	witnesses := map[string][]func() string{}
	var kindName string
	list := func() []string {
		out := make([]string, 1+r.IntN(2))
		for i := range out {
			var w func() string
			out[i], w = propPattern(r)
			witnesses[kindName] = append(witnesses[kindName], w)
		}
		return out
	}
	for i := 0; i < techs; i++ {
		d := map[string]any{"cats": []int{[]int{1, 12, 22, 27}[r.IntN(4)]}}
		kindName = []string{"scriptSrc", "headers", "meta", "text", "html", "html"}[r.IntN(6)]
		switch kindName {
		case "headers":
			d["headers"] = map[string]any{"Server": list()}
		case "meta":
			d["meta"] = map[string]any{"generator": list()}
		default:
			d[kindName] = list()
		}
		if r.IntN(6) == 0 {
			d["implies"] = fmt.Sprintf("T%d\\;confidence:%d", r.IntN(techs), 20+r.IntN(80))
		}
		if r.IntN(10) == 0 {
			d["excludes"] = fmt.Sprintf("T%d", r.IntN(techs))
		}
		if r.IntN(10) == 0 {
			d["requires"] = fmt.Sprintf("T%d", r.IntN(techs))
		}
		defs[fmt.Sprintf("T%d", i)] = d
	}
	data, err := json.Marshal(defs)
	if err != nil {
		t.Fatal(err)
	}
	techMap, err := ParseTechnologies(data)
	if err != nil {
		t.Fatalf("generated database: %v", err)
	}
	var all []*Technology
	for _, tech := range techMap {
		all = append(all, tech)
	}
	return Merge(build(testCategories, nil), NewDB(all...)), witnesses
}

// plant returns noise with texts matching some of the patterns mixed in.
func plant(r *rand.Rand, ws []func() string, n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString(propText(r, r.IntN(30)))
		if len(ws) > 0 && r.IntN(2) == 0 {
			w := ws[r.IntN(len(ws))]()
			if r.IntN(3) == 0 {
				w = foldRunes(w, r) // RE2 folds U+212A to k and U+017F to s
			}
			b.WriteString(w)
		}
	}
	return b.String()
}

func TestPrefilterNeverChangesAnswer(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 14))
	pages, found := 0, 0
	for round := 0; round < 8; round++ {
		db, ws := propDB(t, r, 150)
		e := NewEngine(db)
		for i := 0; i < 60; i++ {
			ev := &Evidence{
				HTML:      plant(r, ws["html"], 2+r.IntN(20)),
				Text:      plant(r, ws["text"], 2),
				ScriptSrc: []string{plant(r, ws["scriptSrc"], 1), plant(r, ws["scriptSrc"], 1)},
				Headers:   map[string][]string{"server": {plant(r, ws["headers"], 1)}},
				Meta:      map[string][]string{"generator": {plant(r, ws["meta"], 1)}},
			}
			got, want := e.Analyze(ev), naiveAnalyze(e, ev)
			pages++
			found += len(want)
			if !equalDetections(got, want) {
				t.Fatalf("round %d page %d differs\nengine %v\nnaive  %v\nhtml %q", round, i, got, want, ev.HTML)
			}
		}
	}
	if found < 5*pages {
		t.Errorf("only %d detections over %d pages: the generator exercises too little", found, pages)
	}
}

// A page with more anchor occurrences than the engine tries one by one
// takes the cut-search path; it must agree too.
func TestManyAnchorOccurrences(t *testing.T) {
	js := `{"Lists": {"html": "<li class=\"item\">([\\d.]+) zz\\;version:\\1"},
		"Boundary": {"html": "\\bclass=\"item\">([\\d.]+) zz\\;version:\\1"}}`
	page := strings.Repeat(`<li class="item">1 </li>`, maxStarts+10) + `<li class="item">4.5 zz</li>`
	ds := detect(t, js, &Evidence{HTML: page}) // detect also compares with the naive loop
	for _, name := range []string{"Lists", "Boundary"} {
		if d, ok := find(ds, name); !ok || d.Version != "4.5" {
			t.Errorf("%s: got %v", name, ds)
		}
	}
}

func TestFoldHazardsAreTheOnlyOnes(t *testing.T) {
	// The prefilter folds only ASCII; this checks that no other rune folds
	// to an ASCII letter under RE2's (Unicode simple) case folding.
	for r := rune(0x80); r <= unicode.MaxRune; r++ {
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if f < 0x80 && !isFoldHazard(r) {
				t.Fatalf("U+%04X folds to %q but is not treated as a hazard", r, f)
			}
		}
	}
}
