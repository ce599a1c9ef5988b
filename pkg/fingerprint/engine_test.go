package fingerprint

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

var testCategories = map[int]Category{
	1:  {ID: 1, Name: "CMS", Priority: 1},
	6:  {ID: 6, Name: "Ecommerce", Priority: 1},
	12: {ID: 12, Name: "JavaScript frameworks", Priority: 8},
	22: {ID: 22, Name: "Web servers", Priority: 8},
	27: {ID: 27, Name: "Programming languages", Priority: 5},
	34: {ID: 34, Name: "Databases", Priority: 5},
	80: {ID: 80, Name: "Themes", Priority: 9},
}

// fixtureDB builds a database from Wappalyzer-format JSON written for a
// test, with testCategories, failing the test on any problem.
func fixtureDB(t testing.TB, js string) *DB {
	t.Helper()
	techs, err := ParseTechnologies([]byte(js))
	if err != nil {
		t.Fatalf("fixture: %v", err)
	}
	var list []*Technology
	for _, tech := range techs {
		list = append(list, tech)
	}
	return Merge(build(testCategories, nil), NewDB(list...))
}

func detect(t testing.TB, js string, ev *Evidence) []Detection {
	t.Helper()
	e := NewEngine(fixtureDB(t, js))
	got := e.Analyze(ev)
	if naive := naiveAnalyze(e, ev); !equalDetections(got, naive) {
		t.Errorf("engine and naive loop disagree:\nengine %v\nnaive  %v", got, naive)
	}
	return got
}

func equalDetections(a, b []Detection) bool {
	return slices.EqualFunc(a, b, func(x, y Detection) bool {
		return x.Name == y.Name && x.Version == y.Version && x.Confidence == y.Confidence &&
			slices.Equal(x.Categories, y.Categories)
	})
}

func find(ds []Detection, name string) (Detection, bool) {
	for _, d := range ds {
		if d.Name == name {
			return d, true
		}
	}
	return Detection{}, false
}

func names(ds []Detection) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Name)
	}
	return out
}

func TestSlug(t *testing.T) {
	for name, want := range map[string]string{
		"Apache HTTP Server": "apache-http-server",
		"Vue.js":             "vue-js",
		"Next.js":            "next-js",
		"  C++ / Qt  ":       "c-qt",
		"Google Analytics":   "google-analytics",
		"Día":                "d-a",
	} {
		if got := Slug(name); got != want {
			t.Errorf("Slug(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestExpandVersion(t *testing.T) {
	groups := []string{"whole", "1.2", "", "pro"}
	g := func(i int) string {
		if i < len(groups) {
			return groups[i]
		}
		return ""
	}
	for tmpl, want := range map[string]string{
		`\1`:             "1.2",
		`v\1-\3`:         "v1.2-pro",
		`\3?enterprise:`: "enterprise",
		`\2?yes:no`:      "no",
		`\2?\1:\3`:       "pro",
		`\1?\1.x:none`:   "1.2.x",
		`fixed`:          "fixed",
		`\9`:             "",
	} {
		if got := expandVersion(tmpl, g); got != want {
			t.Errorf("expandVersion(%q) = %q, want %q", tmpl, got, want)
		}
	}
}

func TestVersionTernaryAndGroups(t *testing.T) {
	js := `{"Gen": {"cats": [1], "headers": {"X-Gen": "gen(?:-(pro))?(?:/([\\d.]+))?\\;version:\\1?pro \\2:basic \\2"}}}`
	for value, want := range map[string]string{"gen-pro/2.1": "pro 2.1", "GEN/3.0": "basic 3.0", "gen": "basic"} {
		d, ok := find(detect(t, js, &Evidence{Headers: map[string][]string{"x-gen": {value}}}), "Gen")
		if !ok || d.Version != want {
			t.Errorf("X-Gen %q: got %+v (found %v), want version %q", value, d, ok, want)
		}
	}
}

func TestConfidenceSumsAndCaps(t *testing.T) {
	js := `{"Weak": {"cats": [12], "html": ["alpha-marker\\;confidence:40", "beta-marker\\;confidence:40", "gamma-marker\\;confidence:40"]}}`
	for html, want := range map[string]int{
		"<p>alpha-marker</p>":                           40,
		"<p>alpha-marker beta-marker</p>":               80,
		"<p>alpha-marker beta-marker gamma-marker</p>":  100,
		"<p>alpha-marker alpha-marker alpha-marker</p>": 40, // one pattern counts once
	} {
		d, _ := find(detect(t, js, &Evidence{HTML: html}), "Weak")
		if d.Confidence != want {
			t.Errorf("%q: confidence %d, want %d", html, d.Confidence, want)
		}
	}
}

func TestMostSpecificVersion(t *testing.T) {
	js := `{"Srv": {"cats": [22],
		"headers": {"Server": "srv/([\\d.]+)\\;version:\\1"},
		"meta": {"generator": "srv ([\\d.]+)\\;version:\\1\\;confidence:50"},
		"scriptSrc": "srv-(\\d+)\\.js\\;version:\\1\\;confidence:30"}}`
	ev := &Evidence{Headers: map[string][]string{"server": {"srv/1.25"}},
		Meta: map[string][]string{"generator": {"Srv 1.25.3"}}, ScriptSrc: []string{"/srv-2.js"}}
	if d, _ := find(detect(t, js, ev), "Srv"); d.Version != "1.25.3" {
		t.Errorf("version %q, want the refinement 1.25.3 of the strongest 1.25", d.Version)
	}
	ev.Headers = nil
	ev.Meta = nil
	if d, _ := find(detect(t, js, ev), "Srv"); d.Version != "2" {
		t.Errorf("version %q, want 2", d.Version)
	}
}

func TestImpliesChainWithConfidence(t *testing.T) {
	js := `{
		"Shop": {"cats": [6], "cookies": {"shop_session": ""}, "implies": "Framework\\;confidence:60"},
		"Framework": {"cats": [12], "implies": ["Lang\\;version:8"]},
		"Lang": {"cats": [27]},
		"Loop": {"cats": [27], "implies": "Shop"}
	}`
	ds := detect(t, js, &Evidence{Cookies: map[string]string{"SHOP_SESSION": "x"}})
	want := map[string]int{"Shop": 100, "Framework": 60, "Lang": 60}
	for name, c := range want {
		if d, ok := find(ds, name); !ok || d.Confidence != c {
			t.Errorf("%s: got %+v (found %v), want confidence %d", name, d, ok, c)
		}
	}
	if d, _ := find(ds, "Lang"); d.Version != "8" {
		t.Errorf("Lang version %q, want 8 from the implication", d.Version)
	}
	if _, ok := find(ds, "Loop"); ok {
		t.Error("Loop is not implied by anything found")
	}
	// A cycle must end.
	ds = detect(t, `{"A": {"html": "aaa-x", "implies": "B"}, "B": {"implies": "A"}}`, &Evidence{HTML: "aaa-x"})
	if len(ds) != 2 {
		t.Errorf("cycle: got %v", names(ds))
	}
}

func TestExcludes(t *testing.T) {
	js := `{
		"Modern": {"cats": [12], "html": "modern-app", "excludes": "Legacy", "implies": "Runtime"},
		"Legacy": {"cats": [12], "html": "app", "implies": "OldRuntime"},
		"Runtime": {}, "OldRuntime": {}
	}`
	ds := detect(t, js, &Evidence{HTML: "<div id=modern-app>"})
	// Legacy is excluded by Modern, and OldRuntime came only from Legacy.
	if got := names(ds); !slices.Equal(got, []string{"Modern", "Runtime"}) {
		t.Errorf("got %v, want [Modern Runtime]", got)
	}
	if ds := detect(t, js, &Evidence{HTML: "<div id=app>"}); !slices.Equal(names(ds), []string{"Legacy", "OldRuntime"}) {
		t.Errorf("without Modern: %v", names(ds))
	}
}

func TestRequiresAndRequiresCategory(t *testing.T) {
	js := `{
		"Base": {"cats": [1], "meta": {"generator": "^base"}},
		"Plugin": {"cats": [6], "html": "/plugins/shopcart/", "requires": "Base"},
		"Skin": {"cats": [80], "html": "/skins/aurora/", "requiresCategory": 1},
		"Addon": {"cats": [80], "html": "/addons/x/", "requires": "Plugin"}
	}`
	page := `<link href="/plugins/shopcart/a.css"><link href="/skins/aurora/s.css"><script src="/addons/x/y.js">`
	ds := detect(t, js, &Evidence{HTML: page})
	if len(ds) != 0 {
		t.Errorf("without Base nothing may be detected, got %v", names(ds))
	}
	ds = detect(t, js, &Evidence{HTML: page, Meta: map[string][]string{"generator": {"Base 2"}}})
	for _, n := range []string{"Base", "Plugin", "Skin", "Addon"} {
		if _, ok := find(ds, n); !ok {
			t.Errorf("%s missing from %v", n, names(ds))
		}
	}
}

func TestEveryEvidenceKind(t *testing.T) {
	js := `{
		"ByURL": {"url": "^https?://[^/]+\\.myshop\\.example/"},
		"ByHeader": {"headers": {"X-Served-By": "edgebox-(\\w+)\\;version:\\1"}},
		"ByHeaderExists": {"headers": {"X-Drupal-Cache": ""}},
		"ByCookie": {"cookies": {"cart_token": "^[a-f0-9]+$"}},
		"ByMeta": {"meta": {"generator": "Sitebuilder ([\\d.]+)\\;version:\\1"}},
		"ByScriptSrc": {"scriptSrc": "/libs/widgetkit(?:\\.min)?\\.js\\?v=([\\d.]+)\\;version:\\1"},
		"ByScripts": {"scripts": "window\\.__PAGEDATA__\\s*="},
		"ByCSS": {"css": "\\.fancybox-wrap"},
		"ByText": {"text": "Powered by Fooforum"},
		"ByRobots": {"robots": "Disallow: /fooadmin/"},
		"ByDNS": {"dns": {"TXT": "foomail-verification=", "MX": "mx\\.foomail\\.example"}},
		"ByCert": {"certIssuer": "Foo Trust CA"},
		"ByHTML": {"html": "<div[^>]+data-foo-app=\"([\\d.]+)\"\\;version:\\1"},
		"Unseen": {"headers": {"X-Served-By": "otherbox"}, "html": "nothing-like-this"}
	}`
	var ev Evidence
	ParseHTML([]byte(`<!doctype html><html><head><title> Shop  home </title>
		<meta name="Generator" content="Sitebuilder 4.2">
		<script src="/libs/widgetkit.min.js?v=1.9.3"></script>
		<script>window.__PAGEDATA__ = {"a":1}</script>
		<style>.fancybox-wrap{position:absolute}</style></head>
		<body><div class="x" data-foo-app="7.1">hello</div><footer>Powered by   Fooforum</footer></body></html>`), &ev)
	ev.URL = "https://www.myshop.example/cart"
	ev.Headers = map[string][]string{"x-served-by": {"cache-1", "edgebox-fra"}, "x-drupal-cache": {"HIT"}}
	ev.Cookies = map[string]string{"cart_token": "abc123"}
	ev.Robots = "User-agent: *\nDisallow: /fooadmin/\n"
	ev.DNS = map[string][]string{"TXT": {"v=spf1 -all", "foomail-verification=xyz"}, "MX": {"10 mx.foomail.example."}}
	ev.CertIssuer = "CN=Foo Trust CA, O=Foo"
	ds := detect(t, js, &ev)
	want := map[string]string{"ByURL": "", "ByHeader": "fra", "ByHeaderExists": "", "ByCookie": "", "ByMeta": "4.2",
		"ByScriptSrc": "1.9.3", "ByScripts": "", "ByCSS": "", "ByText": "", "ByRobots": "", "ByDNS": "",
		"ByCert": "", "ByHTML": "7.1"}
	for name, version := range want {
		d, ok := find(ds, name)
		if !ok {
			t.Errorf("%s not detected", name)
		} else if d.Version != version {
			t.Errorf("%s version %q, want %q", name, d.Version, version)
		}
	}
	if len(ds) != len(want) {
		t.Errorf("detected %v, want exactly %d", names(ds), len(want))
	}
}

func TestOutputOrderAndFields(t *testing.T) {
	js := `{
		"Zeta CMS": {"cats": [1], "html": "zeta-cms", "website": "https://zeta.example"},
		"Alpha Server": {"cats": [22], "html": "alpha-server"},
		"Beta Lang": {"cats": [27, 22], "html": "beta-lang"},
		"Acme CMS": {"cats": [1], "html": "acme-cms"}
	}`
	ds := detect(t, js, &Evidence{HTML: "beta-lang alpha-server zeta-cms acme-cms"})
	if got := names(ds); !slices.Equal(got, []string{"Acme CMS", "Zeta CMS", "Beta Lang", "Alpha Server"}) {
		t.Errorf("order %v: want category priority, then name", got)
	}
	d, _ := find(ds, "Zeta CMS")
	if d.Slug != "zeta-cms" || d.Website != "https://zeta.example" || !slices.Equal(d.Categories, []string{"CMS"}) {
		t.Errorf("fields: %+v", d)
	}
	if b, _ := find(ds, "Beta Lang"); !slices.Equal(b.Categories, []string{"Programming languages", "Web servers"}) {
		t.Errorf("categories %v", b.Categories)
	}
}

func TestCaseInsensitive(t *testing.T) {
	js := `{"Caps": {"html": "<meta name=\"shopify-checkout-api-token\""}, "K": {"html": "kit-script"}}`
	ds := detect(t, js, &Evidence{HTML: `<META NAME="Shopify-Checkout-API-Token" content=x>`})
	if _, ok := find(ds, "Caps"); !ok {
		t.Error("match must ignore case")
	}
	// U+212A KELVIN SIGN folds to k under (?i): the prefilter must not hide it.
	if _, ok := find(detect(t, js, &Evidence{HTML: "\u212aIT-SCRIPT"}), "K"); !ok {
		t.Error("Kelvin sign must match k as RE2 does")
	}
}

func TestProblemsAreReportedNotFatal(t *testing.T) {
	js := `{"Mixed": {
		"cats": [12],
		"html": ["ok-marker", "look(?=ahead)", "back\\1ref"],
		"headers": {"X-Thing": "[unclosed"},
		"scriptSrc": "x\\;confidence:high",
		"js": {"Mixed.version": "", "Mixed.app": ""},
		"dom": ["#mixed", "body > .mixed"],
		"xhr": "api.mixed.example",
		"scriptsrc": "typo",
		"saas": true
	}}`
	techs, err := ParseTechnologies([]byte(js))
	if err == nil {
		t.Fatal("want an error naming the bad patterns")
	}
	var p Problem
	if !errors.As(err, &p) || p.Technology != "Mixed" {
		t.Errorf("error %v does not carry a Problem", err)
	}
	for _, s := range []string{`html "back\\1ref"`, `headers.X-Thing "[unclosed"`, `confidence "high"`, "scriptsrc: unknown field"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error lacks %q:\n%v", s, err)
		}
	}
	if strings.Contains(err.Error(), "look(?=ahead)") {
		t.Errorf("a look-ahead runs on the backtracking engine, it is no problem:\n%v", err)
	}
	tech := techs["Mixed"]
	if tech == nil || len(patternsOf(tech)) != 2 {
		t.Fatalf("want the two usable patterns kept, got %+v", tech)
	}
	db := Merge(build(testCategories, nil), NewDB(tech))
	r := db.Report()
	if r.Technologies != 1 || r.Evaluated != 2 || r.Backtracking != 1 || r.NotEvaluated != 5 || r.NeedingBrowser != 3 || len(r.Problems) != 4 {
		t.Errorf("report %+v", r)
	}
	for _, p := range r.Problems {
		if p.Reason == "" || p.Field == "" {
			t.Errorf("problem without field or reason: %+v", p)
		}
	}
	e := NewEngine(db)
	if ds := e.Analyze(&Evidence{HTML: "an ok-marker here"}); len(ds) != 1 {
		t.Errorf("the rest of the technology must still match, got %v", ds)
	}
	if ds := e.Analyze(&Evidence{HTML: "we look ahead"}); len(ds) != 0 {
		t.Errorf("look(?=ahead) must not match a space before ahead, got %v", ds)
	}
	if ds := e.Analyze(&Evidence{HTML: "lookahead"}); len(ds) != 1 {
		t.Errorf("look(?=ahead) must match, got %v", ds)
	}
}

func TestParseRejectsMalformed(t *testing.T) {
	for name, js := range map[string]string{
		"duplicate":   `{"A": {}, "A": {"html": "x"}}`,
		"not object":  `["A"]`,
		"bad cats":    `{"A": {"cats": "CMS"}}`,
		"bad headers": `{"A": {"headers": ["x"]}}`,
		"trailing":    `{"A": {}} {}`,
	} {
		if _, err := ParseTechnologies([]byte(js)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
