package fingerprint

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

// The fixture in testdata/community reproduces, in a few technologies, each
// property of the community database the loader must take as it is (see
// its README).
const communityDir = "testdata/community"

func loadCommunity(t testing.TB) *DB {
	t.Helper()
	db, err := LoadDir(communityDir)
	if err != nil {
		t.Fatalf("the community fixture must load: %v", err)
	}
	return db
}

// problemList renders problems one a line, sorted, for comparisons.
func problemList(ps []Problem) string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.Technology + " | " + p.Field + " | " + p.Pattern
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

func TestCommunityFixtureReport(t *testing.T) {
	r := loadCommunity(t).Report()
	wantPatterns := map[string]int{
		"headers": 2, "cookies": 1, "dns": 1, "certIssuer": 1, "robots": 1, "url": 1, "text": 1, "css": 1, "scripts": 1,
		"scriptSrc": 7, "html": 5, "meta": 1, "js": 5, "dom": 7, "xhr": 2,
	}
	if !maps.Equal(r.Patterns, wantPatterns) {
		t.Errorf("patterns per kind %v\nwant %v", r.Patterns, wantPatterns)
	}
	if r.Technologies != 7 || r.Categories != 8 || r.Evaluated != 23 || r.Backtracking != 6 ||
		r.NotEvaluated != 14 || r.NeedingBrowser != 8 {
		t.Errorf("report %+v", r)
	}
	// Unused fields (probe, saas, pricing, oss, cpe, icon...) are quiet;
	// what is reported: two merges, one version without a group, and the
	// references the fixture alone cannot resolve.
	want := strings.Join([]string{
		`Fastspring | name | FastSpring`,
		`Leaflet | html | leaflet-container\;version:\1`,
		`PayForm | implies | PHP`,
		`WooCommerce | implies | PHP`,
		`WooCommerce | name | Woocommerce`,
		`WooCommerce | requires | WordPress`,
		`2Edge | excludes | Nginx`,
	}, "\n")
	want = problemList(parseProblemLines(want))
	if got := problemList(r.Problems); got != want {
		t.Errorf("problems:\n%s\nwant:\n%s", got, want)
	}
	for _, p := range r.Problems {
		if p.Field == "name" && !strings.Contains(p.Reason, "technologies/") {
			t.Errorf("a merge must name the files: %v", p)
		}
	}
}

func parseProblemLines(s string) []Problem {
	var out []Problem
	for _, line := range strings.Split(s, "\n") {
		f := strings.Split(line, " | ")
		out = append(out, Problem{Technology: f[0], Field: f[1], Pattern: f[2]})
	}
	return out
}

func TestCommunityFixtureDetects(t *testing.T) {
	e := NewEngine(loadCommunity(t))
	for _, c := range []struct {
		name    string
		ev      Evidence
		tech    string // "" for none
		version string
	}{
		{"jquery versioned", Evidence{ScriptSrc: []string{"https://code.jquery.com/jquery-3.7.1.min.js"}}, "jQuery", "3.7.1"},
		{"jquery plain", Evidence{ScriptSrc: []string{"/static/js/jquery.min.js"}}, "jQuery", ""},
		{"jquery-ui is not jquery", Evidence{ScriptSrc: []string{"/static/js/jquery-ui.min.js"}}, "", ""},
		{"jquery-migrate is not jquery", Evidence{ScriptSrc: []string{"/static/js/jquery-migrate.js"}}, "", ""},
		{"leaflet versioned", Evidence{ScriptSrc: []string{"/lib/leaflet-1.9.4.min.js"}}, "Leaflet", "1.9.4"},
		{"vue-leaflet is not leaflet", Evidence{ScriptSrc: []string{"/js/vue-leaflet.js"}}, "", ""},
		{"leaflet css", Evidence{HTML: `<link rel="stylesheet" href="/css/leaflet.css">`}, "Leaflet", ""},
		{"leafletstyle.css is not leaflet", Evidence{HTML: `<link rel="stylesheet" href="/css/leafletstyle.css">`}, "", ""},
		{"version without a group still detects", Evidence{HTML: `<div class="leaflet-container">`}, "Leaflet", ""},
		{"vue scoped attribute", Evidence{HTML: `<div data-v-7ba5bd90 class="card">`}, "Vue.js", ""},
		{"data-v-app is not a scoped attribute", Evidence{HTML: `<div data-v-app>`}, "", ""},
		{"fastspring by the first definition", Evidence{ScriptSrc: []string{"https://sbl.onfastspring.com/sbl/1.0.3/fastspring-builder.min.js"}}, "Fastspring", "1.0.3"},
		{"fastspring by the second definition", Evidence{HTML: `<button data-fsc-action="Add,Checkout">Buy</button>`}, "Fastspring", ""},
		// The user's definition has no requirement: its pattern detects
		// WooCommerce though WordPress (which w.json requires) is absent.
		{"woocommerce by the ungated rule", Evidence{ScriptSrc: []string{"/wp-content/plugins/woocommerce/assets/js/frontend/woocommerce.min.js?ver=8.4.0"}}, "WooCommerce", "8.4.0"},
		{"woocommerce gated rule without WordPress", Evidence{HTML: `<link rel='stylesheet' href='/wp-content/plugins/woocommerce/assets/css/woocommerce.css?ver=8.4.0'>`}, "", ""},
		{"edge header", Evidence{Headers: map[string][]string{"server": {"2edge/4.2"}}}, "2Edge", "4.2"},
		{"edge certificate", Evidence{CertIssuer: "2Edge Trust CA R3"}, "2Edge", ""},
	} {
		ds := e.Analyze(&c.ev)
		if naive := naiveAnalyze(e, &c.ev); !equalDetections(ds, naive) {
			t.Errorf("%s: engine and naive loop disagree:\nengine %v\nnaive  %v", c.name, ds, naive)
		}
		if c.tech == "" {
			if len(ds) != 0 {
				t.Errorf("%s: want nothing, got %v", c.name, ds)
			}
			continue
		}
		if len(ds) != 1 || ds[0].Name != c.tech || ds[0].Version != c.version {
			t.Errorf("%s: want %s %q alone, got %v", c.name, c.tech, c.version, ds)
		}
	}
}

// TestCommunityOnBuiltin loads the fixture as FINGERPRINTS_DIR would be: on
// the built-in database. References to built-in technologies resolve, and a
// technology both define is listed and detected once.
func TestCommunityOnBuiltin(t *testing.T) {
	builtin, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	extra := loadCommunity(t)
	db := Combine(builtin, extra)

	added := 0
	for _, tech := range extra.Technologies() {
		if _, ok := builtin.Lookup(tech.Slug); !ok {
			added++
		}
	}
	if got, want := len(db.Technologies()), len(builtin.Technologies())+added; got != want {
		t.Errorf("%d technologies, want %d (each slug once)", got, want)
	}
	want := problemList(parseProblemLines(strings.Join([]string{
		`Fastspring | name | FastSpring`,
		`Leaflet | html | leaflet-container\;version:\1`,
		`WooCommerce | name | Woocommerce`,
	}, "\n")))
	if got := problemList(db.Report().Problems); got != want {
		t.Errorf("on the built-in database, every reference resolves; problems:\n%s\nwant:\n%s", got, want)
	}
	jq, _ := db.Lookup("jquery")
	builtinJQ, _ := builtin.Lookup("jquery")
	if jq.Name != builtinJQ.Name || jq.Description != builtinJQ.Description {
		t.Errorf("the built-in layer names and describes jQuery: %+v", jq)
	}

	e := NewEngine(db)
	count := func(ds []Detection, name string) int {
		return len(slices.DeleteFunc(slices.Clone(ds), func(d Detection) bool { return d.Name != name }))
	}
	// Both layers' jQuery patterns match this page; the result names it once.
	ds := e.Analyze(&Evidence{ScriptSrc: []string{"/assets/jquery-3.7.1.min.js", "/static/js/jquery.min.js"}})
	if n := count(ds, "jQuery"); n != 1 {
		t.Errorf("jQuery named %d times: %v", n, ds)
	}
	// PayForm requires a CMS: the built-in WordPress is one.
	payform := Evidence{ScriptSrc: []string{"/plugins/payform/assets/payform.min.js?ver=2.3.1"}}
	if ds := e.Analyze(&payform); count(ds, "PayForm") != 0 {
		t.Errorf("PayForm without a CMS: %v", ds)
	}
	payform.Meta = map[string][]string{"generator": {"WordPress 6.4.2"}}
	ds = e.Analyze(&payform)
	if d, ok := find(ds, "PayForm"); !ok || d.Version != "2.3.1" {
		t.Errorf("PayForm on WordPress: %v", ds)
	}
	// 2Edge excludes the built-in Nginx.
	edge := Evidence{Headers: map[string][]string{"server": {"nginx/1.25.3"}, "x-2edge-node": {"fra12"}}}
	if ds := e.Analyze(&edge); count(ds, "Nginx") != 0 || count(ds, "2Edge") != 1 {
		t.Errorf("2Edge excludes Nginx: %v", ds)
	}
}

// TestLayersWorkAcrossEachOther: implies, excludes, requires and
// requiresCategory each work from either layer to the other, and a
// requirement gates only the patterns of the definition that states it.
func TestLayersWorkAcrossEachOther(t *testing.T) {
	base := fixtureDB(t, `{
		"Nginx": {"cats": [22], "headers": {"Server": "^nginx"}},
		"PHP": {"cats": [27], "headers": {"X-Powered-By": "^PHP"}},
		"Shop": {"cats": [6], "html": "shop-base", "implies": "Widget"},
		"Theme": {"cats": [80], "html": "theme-base", "requires": "Widget"}
	}`)
	extra, err := LoadDir(writeFiles(t, map[string]string{"extra.json": `{
		"SHOP": {"cats": [1], "html": "shop-loaded", "requires": "PHP"},
		"Widget": {"cats": [12], "html": "widget-x", "excludes": "Nginx"},
		"Addon": {"cats": [80], "html": "addon-x", "requiresCategory": 6},
		"Gizmo": {"cats": [12], "html": "gizmo-x", "implies": "PHP"}
	}`}))
	if err != nil {
		t.Fatal(err)
	}
	db := Combine(base, extra)
	if p := db.Report().Problems; len(p) != 0 {
		t.Errorf("every reference resolves across the layers: %v", p)
	}
	shop, _ := db.Lookup("shop")
	if n := len(db.Technologies()); n != 7 || shop.Name != "Shop" || !slices.Equal(shop.Categories, []string{"Ecommerce", "CMS"}) {
		t.Errorf("%d technologies; shop %+v", n, shop)
	}
	e := NewEngine(db)
	php := map[string][]string{"x-powered-by": {"PHP/8.3"}}
	nginx := map[string][]string{"server": {"nginx"}}
	for _, c := range []struct {
		name string
		ev   Evidence
		want []string
	}{
		{"base implies loaded", Evidence{HTML: "shop-base"}, []string{"Shop", "Widget"}},
		{"loaded implies base", Evidence{HTML: "gizmo-x"}, []string{"Gizmo", "PHP"}},
		{"loaded requirement unmet", Evidence{HTML: "shop-loaded"}, nil},
		{"loaded requirement met by base", Evidence{HTML: "shop-loaded", Headers: php}, []string{"Shop", "PHP", "Widget"}},
		{"loaded excludes base", Evidence{HTML: "widget-x", Headers: nginx}, []string{"Widget"}},
		{"base requires loaded", Evidence{HTML: "theme-base widget-x"}, []string{"Widget", "Theme"}},
		{"base requirement unmet", Evidence{HTML: "theme-base"}, nil},
		{"loaded requiresCategory of base", Evidence{HTML: "addon-x shop-base"}, []string{"Shop", "Widget", "Addon"}},
		{"loaded requiresCategory unmet", Evidence{HTML: "addon-x"}, nil},
	} {
		ds := e.Analyze(&c.ev)
		if naive := naiveAnalyze(e, &c.ev); !equalDetections(ds, naive) {
			t.Errorf("%s: engine and naive loop disagree:\nengine %v\nnaive  %v", c.name, ds, naive)
		}
		var got []string
		for _, d := range ds {
			got = append(got, d.Name)
		}
		slices.Sort(got)
		want := slices.Sorted(slices.Values(c.want))
		if !slices.Equal(got, want) {
			t.Errorf("%s: got %v, want %v", c.name, got, want)
		}
	}
}

// TestLookaroundPatternsUseThePrefilter: a look-around pattern with a
// literal waits for it, like any other pattern, instead of running on
// every text of its kind.
func TestLookaroundPatternsUseThePrefilter(t *testing.T) {
	// WordPress, which WooCommerce requires, keeps its rule in the engine.
	wp := fixtureDB(t, `{"WordPress": {"cats": [1], "meta": {"generator": "^WordPress"}}}`)
	e := NewEngine(Combine(wp, loadCommunity(t)))
	var backtracking int
	for pid := range e.pats {
		p := &e.pats[pid]
		if p.backtrack == nil {
			continue
		}
		backtracking++
		if p.fullMask == 0 || slices.Contains(e.kinds[p.kind].always[p.key], int32(pid)) {
			t.Errorf("%s %q runs on every text: no literal found in %q", kindNames[p.kind], p.written, p.source)
		}
	}
	if backtracking != 6 {
		t.Errorf("%d look-around patterns in the engine, want 6", backtracking)
	}
}

func TestWithoutLookaround(t *testing.T) {
	for in, want := range map[string]string{
		`jquery(?!-ui)\.js`:         `jquery\.js`,
		`(?<![a-z-])leaflet\.js`:    `leaflet\.js`,
		`data-v-(?=[0-9a-f]{8}\b)`:  `data-v-`,
		`a(?<=(?:b|\)))c`:           `ac`,
		`x[(?=]y`:                   `x[(?=]y`,
		`x\(?=y`:                    `x\(?=y`,
		`(?<name>v)(?!(?:a|[)])b)c`: `(?<name>v)c`,
		`x[]?!]y(?!z`:               `x[]?!]y`,
	} {
		if got := withoutLookaround(in); got != want {
			t.Errorf("withoutLookaround(%q) = %q, want %q", in, got, want)
		}
	}
}
