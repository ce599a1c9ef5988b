package fingerprint

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// patternsOf lists every pattern of a technology, whatever its rule.
func patternsOf(t *Technology) []*pattern {
	var out []*pattern
	for _, r := range t.rules {
		out = append(out, r.patterns...)
	}
	return out
}

func TestLoadDir(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"categories.json": `{"1": {"name": "CMS", "priority": 1}, "99": {"name": "Custom", "priority": 3}}`,
		"a.json":          `{"Acme CMS": {"cats": [1], "meta": {"generator": "^Acme ([\\d.]+)\\;version:\\1"}, "js": {"Acme": ""}}}`,
		"sub/b.json":      `{"Bolt": {"cats": [99], "html": ["bolt-app", "(?<=x)y", "[bad"], "implies": "Nowhere"}}`,
		"notes.txt":       `not json, ignored`,
	})
	db, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	rep := db.Report()
	want := map[string]int{"meta": 1, "html": 2, "js": 1}
	if rep.Technologies != 2 || rep.Categories != 2 || !maps.Equal(rep.Patterns, want) || rep.Evaluated != 3 ||
		rep.Backtracking != 1 || rep.NotEvaluated != 1 || rep.NeedingBrowser != 1 {
		t.Errorf("report %+v", rep)
	}
	var reasons []string
	for _, p := range rep.Problems {
		reasons = append(reasons, p.Error())
	}
	joined := strings.Join(reasons, "\n")
	if len(rep.Problems) != 2 || !strings.Contains(joined, `Bolt: html "[bad"`) || !strings.Contains(joined, `implies "Nowhere": no such technology`) {
		t.Errorf("problems:\n%s", joined)
	}
	tech, ok := db.Lookup("acme-cms")
	if !ok || tech.Name != "Acme CMS" || len(tech.Categories) != 1 || tech.Categories[0] != "CMS" {
		t.Errorf("lookup: %+v", tech)
	}
	ds := NewEngine(db).Analyze(&Evidence{Meta: map[string][]string{"generator": {"Acme 3.1"}}})
	if len(ds) != 1 || ds[0].Version != "3.1" {
		t.Errorf("detections %v", ds)
	}
}

// TestLoadDirMergesSameSlug: a technology defined twice, under one name in
// two files or under names of one slug, loads once, found by both
// definitions, named by the first, with a problem that names both files.
func TestLoadDirMergesSameSlug(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"one.json": `{"Dup": {"cats": [1], "html": "dup-one"}, "Vue.js": {"html": "vue-one"}}`,
		"two.json": `{"Dup": {"cats": [6], "html": "dup-two", "website": "https://dup.example"}, "Vue js": {"html": "vue-two"}}`,
	})
	db, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(db.Technologies()); n != 2 {
		t.Fatalf("%d technologies, want 2", n)
	}
	dup, _ := db.Lookup("dup")
	if dup.Website != "https://dup.example" || !slices.Equal(dup.categoryIDs, []int{1, 6}) {
		t.Errorf("merged Dup: %+v", dup)
	}
	vue, _ := db.Lookup("vue-js")
	if vue.Name != "Vue.js" {
		t.Errorf("the first definition names it, got %q", vue.Name)
	}
	problems := db.Report().Problems
	if len(problems) != 2 {
		t.Fatalf("want one problem per merge, got %v", problems)
	}
	for _, p := range problems {
		if p.Field != "name" || !strings.Contains(p.Reason, "two.json") || !strings.Contains(p.Reason, "one.json") {
			t.Errorf("problem %v: want both files named", p)
		}
	}
	e := NewEngine(db)
	for _, html := range []string{"dup-one", "dup-two"} {
		if ds := e.Analyze(&Evidence{HTML: html}); len(ds) != 1 || ds[0].Name != "Dup" {
			t.Errorf("%s: got %v", html, ds)
		}
	}
	for _, html := range []string{"vue-one", "vue-two"} {
		if ds := e.Analyze(&Evidence{HTML: html}); len(ds) != 1 || ds[0].Name != "Vue.js" {
			t.Errorf("%s: got %v", html, ds)
		}
	}

	dir = writeFiles(t, map[string]string{"bad.json": `{"X": {"html": }`})
	if _, err := LoadDir(dir); err == nil || !strings.Contains(err.Error(), "bad.json") {
		t.Errorf("want an error naming bad.json, got %v", err)
	}
}

func TestMergeLayers(t *testing.T) {
	base := fixtureDB(t, `{"Nginx": {"cats": [22], "headers": {"Server": "nginx"}}, "PHP": {"cats": [27], "headers": {"X-Powered-By": "php"}}}`)
	custom, err := ParseTechnologies([]byte(`{"Nginx": {"cats": [22], "headers": {"Server": "openresty"}}, "Mine": {"cats": [1], "cookies": {"mine": ""}}}`))
	if err != nil {
		t.Fatal(err)
	}
	merged := Merge(base, NewDB(custom["Nginx"], custom["Mine"]))
	if n := len(merged.Technologies()); n != 3 {
		t.Fatalf("%d technologies, want 3", n)
	}
	mine, _ := merged.Lookup("mine")
	if len(mine.Categories) != 1 || mine.Categories[0] != "CMS" {
		t.Errorf("custom technology categories %v: want names bound from the base layer", mine.Categories)
	}
	e := NewEngine(merged)
	if ds := e.Analyze(&Evidence{Headers: map[string][]string{"server": {"nginx"}}}); len(ds) != 0 {
		t.Errorf("the later layer replaces Nginx, got %v", ds)
	}
	if ds := e.Analyze(&Evidence{Headers: map[string][]string{"server": {"openresty"}}}); len(ds) != 1 || ds[0].Name != "Nginx" {
		t.Errorf("got %v", ds)
	}
	// The base layer is unchanged.
	if ds := NewEngine(base).Analyze(&Evidence{Headers: map[string][]string{"server": {"nginx"}}}); len(ds) != 1 {
		t.Errorf("base changed: %v", ds)
	}
}

func TestBuiltinLoadsOnce(t *testing.T) {
	a, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Builtin()
	if a != b {
		t.Error("Builtin must parse once and share the result")
	}
	cats := a.Categories()
	if len(cats) < 40 || cats[0].ID != 1 || cats[0].Name != "CMS" {
		t.Errorf("%d categories embedded, first %+v", len(cats), cats[0])
	}
}
