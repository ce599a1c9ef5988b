package fingerprint

import (
	"fmt"
	"strings"
	"testing"
)

// domEngine builds an engine over one Wappalyzer-format object.
func domEngine(t testing.TB, js string) (*Engine, *DB) {
	t.Helper()
	techs, err := ParseTechnologies([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	var list []*Technology
	for _, tech := range techs {
		list = append(list, tech)
	}
	db := Merge(build(testCategories, nil), NewDB(list...))
	return NewEngine(db), db
}

const domTechs = `{
	"Exists": {"cats": [12], "dom": "div#app-root.shell"},
	"Listed": {"cats": [12], "dom": ["meta[name='listed-app']", "x-listed > span"]},
	"Attr": {"cats": [12], "dom": {"link[data-attr-kit]": {"attributes": {"href": "attr-kit-([\\d.]+)\\.css\\;version:\\1"}}}},
	"Texted": {"cats": [12], "dom": {".credits a": {"text": "^Texted v([\\d.]+)$\\;version:\\1"}}},
	"Propped": {"cats": [12], "dom": {"#prop": {"properties": {"_reactRoot": ""}}}},
	"Emptied": {"cats": [12], "dom": "div.slot:empty"}
}`

func TestDOMChecks(t *testing.T) {
	e, db := domEngine(t, domTechs)
	for _, c := range []struct {
		name, html, tech, version string
	}{
		{"exists", `<body><div class="x shell" id="app-root">hi</div></body>`, "Exists", ""},
		{"exists needs the class", `<body><div id="app-root">hi</div></body>`, "", ""},
		{"exists needs the tag", `<body><span class="shell" id="app-root">hi</span></body>`, "", ""},
		{"listed, first selector", `<head><META NAME="listed-app" content="1"></head>`, "Listed", ""},
		{"listed, child combinator", `<x-listed><span>a</span></x-listed>`, "Listed", ""},
		{"listed, not a child", `<x-listed><b><span>a</span></b></x-listed>`, "", ""},
		{"attribute with version", `<link rel=stylesheet data-attr-kit href="/s/attr-kit-2.4.1.css">`, "Attr", "2.4.1"},
		{"attribute entity decoded", `<link data-attr-kit href="/s/attr&#45;kit-2.4.1.css">`, "Attr", "2.4.1"},
		{"attribute must match", `<link data-attr-kit href="/s/other-2.4.1.css">`, "", ""},
		{"attribute on another element", `<link href="/s/attr-kit-2.4.1.css"><link data-attr-kit>`, "", ""},
		{"text of descendants", `<p class="credits">Made with <a href="/">Texted <b>v3.2</b></a></p>`, "Texted", "3.2"},
		{"text anchored", `<p class="credits"><a>Texted v3.2 and more</a></p>`, "", ""},
		{"text outside the element", `<p class="credits"><a>Texted</a> v3.2</p>`, "", ""},
		{":empty sees text", `<div class="slot">x</div>`, "", ""},
		{":empty", `<div class="slot"></div><p>text</p>`, "Emptied", ""},
		{"properties need a browser", `<div id="prop"></div>`, "", ""},
	} {
		ev := &Evidence{}
		ParseHTML([]byte(c.html), ev)
		ds := e.Analyze(ev)
		if naive := naiveAnalyze(e, ev); !equalDetections(ds, naive) {
			t.Errorf("%s: engine %s, naive %s", c.name, describe(ds), describe(naive))
		}
		// Evidence that did not come from ParseHTML: the engine lexes.
		if raw := e.Analyze(&Evidence{HTML: c.html}); !equalDetections(ds, raw) {
			t.Errorf("%s: with ParseHTML %s, from HTML alone %s", c.name, describe(ds), describe(raw))
		}
		if c.tech == "" {
			if len(ds) != 0 {
				t.Errorf("%s: want nothing, got %s", c.name, describe(ds))
			}
			continue
		}
		if len(ds) != 1 || ds[0].Name != c.tech || ds[0].Version != c.version {
			t.Errorf("%s: want %s %q, got %s", c.name, c.tech, c.version, describe(ds))
		}
	}
	r := db.Report()
	if r.Patterns["dom"] != 7 || r.NeedingBrowser != 1 || r.NotEvaluated != 1 || r.Evaluated != 6 {
		t.Errorf("report %+v", r)
	}
}

func TestDOMRefusesCostlySelectors(t *testing.T) {
	for _, sel := range []string{"a ~ b", "li:nth-child(2n)", "div:has(> a)", "body div a", "p::before",
		"ul li:last-child", `#a\:b`, "div:not(.a .b)"} {
		if _, err := compileSelector(sel); err == nil {
			t.Errorf("%q: want refused", sel)
		}
	}
	for _, sel := range []string{"a + b", "body > div > a", "html .x", "li:first-child", "div:not(.a)",
		"[data-x='a b, c']", "a[href*='x'], #y"} {
		if _, err := compileSelector(sel); err != nil {
			t.Errorf("%q: %v", sel, err)
		}
	}
	techs, err := ParseTechnologies([]byte(`{"T": {"cats": [1], "dom": {"a ~ b": {"exists": "", "attributes": {"x": "y"}}, "p": {"exists": ""}}}}`))
	if err == nil || !strings.Contains(err.Error(), "not evaluated on the static page") {
		t.Errorf("want a problem naming the refused selector, got %v", err)
	}
	if tech := techs["T"]; tech.deferred.dom != 2 || len(patternsOf(tech)) != 1 {
		t.Errorf("want two checks not evaluated and one pattern kept, got %+v", tech)
	}
}

// TestDOMPrefilterNames: a selector's required names (tag, id, class,
// attribute, any case for tags and attributes) are what the page's
// summary holds, so the prefilter lets through exactly the pages that can
// match.
func TestDOMPrefilterNames(t *testing.T) {
	var seen domSeen
	summarize(`<DIV Id="Main" class=" a  b&#x63; " DATA-X=1><svg:rect/></DIV>`, &seen)
	for _, sel := range []string{"div", "#Main", ".a", ".bc", "[data-x]", "div#Main.a[data-x]", "body, div"} {
		s, err := compileSelector(sel)
		if err != nil {
			t.Fatal(err)
		}
		if !s.canMatch(&seen) {
			t.Errorf("%q: the prefilter hides a page it can match", sel)
		}
	}
	for _, sel := range []string{"span", "#other", ".c", "[data-y]", "div.zz", "div > .nope"} {
		s, _ := compileSelector(sel)
		if s.canMatch(&seen) {
			t.Errorf("%q: the prefilter lets through a page it cannot match", sel)
		}
	}
}

// hostilePage nests n elements (or puts them side by side), each a
// candidate for every selector of hostileTechs, none matching.
func hostilePage(n int, nested bool) string {
	var b strings.Builder
	b.WriteString("<html><body>")
	for i := range n {
		fmt.Fprintf(&b, `<div class="h" data-h="%d">`, i)
		if !nested {
			b.WriteString("t</div>")
		}
	}
	return b.String()
}

const hostileTechs = `{
	"Deep": {"cats": [12], "dom": {"section .h": {"exists": ""}}},
	"Child": {"cats": [12], "dom": {"span > div.h": {"exists": ""}}},
	"Next": {"cats": [12], "dom": {"p + div.h": {"exists": ""}}},
	"First": {"cats": [12], "dom": {"div.h:first-child[data-h='x']": {"exists": ""}}},
	"Text": {"cats": [12], "dom": {"div.h": {"text": "never-here"}}}
}`

// TestDOMHostilePage: 100,000 nested elements, each a candidate for every
// selector: the tree stays within its depth, and nothing is found.
// BenchmarkDOMHostile shows the time grows with the page's size.
func TestDOMHostilePage(t *testing.T) {
	e, _ := domEngine(t, hostileTechs)
	page := hostilePage(100_000, true)
	tree := buildTree(page, true)
	if len(tree.elems) != 100_002 {
		t.Fatalf("%d elements", len(tree.elems))
	}
	depth := 0
	for n := tree.elems[len(tree.elems)-1]; n.Parent != nil; n = n.Parent {
		depth++
	}
	if depth > maxDOMDepth+1 {
		t.Errorf("depth %d, want at most %d", depth, maxDOMDepth+1)
	}
	ev := &Evidence{}
	ParseHTML([]byte(page), ev)
	if ds := e.Analyze(ev); len(ds) != 0 {
		t.Errorf("found %s", describe(ds))
	}
}

// BenchmarkDOMHostile times the dom stage on hostile pages of growing
// size, nested and flat: ns/element must stay flat as the page grows.
func BenchmarkDOMHostile(b *testing.B) {
	e, _ := domEngine(b, hostileTechs)
	for _, nested := range []bool{true, false} {
		for _, n := range []int{10_000, 100_000} {
			ev := &Evidence{}
			ParseHTML([]byte(hostilePage(n, nested)), ev)
			b.Run(fmt.Sprintf("nested=%v/elements=%d", nested, n), func(b *testing.B) {
				for range b.N {
					e.Analyze(ev)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/element")
			})
		}
	}
}
