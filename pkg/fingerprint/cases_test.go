package fingerprint

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// builtinCase is one entry of testdata/cases/*.json, written by the people
// who write the built-in database: evidence modelled on what the real
// software emits, and the technology it must reveal.
type builtinCase struct {
	Tech     string       `json:"tech"`
	Version  *string      `json:"version"`
	Evidence caseEvidence `json:"evidence"`
	Absent   []string     `json:"absent"`
}

type caseEvidence struct {
	URL        string              `json:"url"`
	Status     int                 `json:"status"`
	Headers    map[string][]string `json:"headers"`
	Cookies    map[string]string   `json:"cookies"`
	HTML       string              `json:"html"`
	Robots     string              `json:"robots"`
	DNS        map[string][]string `json:"dns"`
	CertIssuer string              `json:"certIssuer"`
}

// evidence builds what the scanner would: header names lower-cased, the
// HTML taken apart by the same ParseHTML.
func (c caseEvidence) evidence() *Evidence {
	ev := &Evidence{URL: c.URL, Status: c.Status, Cookies: c.Cookies, Robots: c.Robots,
		CertIssuer: c.CertIssuer, Headers: map[string][]string{}, DNS: map[string][]string{}}
	for k, v := range c.Headers {
		k = strings.ToLower(k)
		ev.Headers[k] = append(ev.Headers[k], v...)
	}
	for k, v := range c.DNS {
		ev.DNS[strings.ToUpper(k)] = v
	}
	if c.HTML != "" {
		ParseHTML([]byte(c.HTML), ev)
	}
	return ev
}

type caseFile struct {
	name  string
	cases []builtinCase
}

// loadCases reads every case file, strictly: an unknown field is a typo
// that would otherwise make a case test nothing.
func loadCases(t *testing.T) []caseFile {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "cases", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	var files []caseFile
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		var cases []builtinCase
		if err := dec.Decode(&cases); err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		files = append(files, caseFile{name: filepath.Base(p), cases: cases})
	}
	return files
}

func builtinEngine(t testing.TB) (*DB, *Engine) {
	t.Helper()
	db, err := Builtin()
	if err != nil {
		t.Fatalf("built-in database: %v", err)
	}
	return db, NewEngine(db)
}

func TestBuiltinCases(t *testing.T) {
	db, e := builtinEngine(t)
	failures := 0
	for _, f := range loadCases(t) {
		for i, c := range f.cases {
			problem := checkCase(db, e, c)
			if problem == "" {
				continue
			}
			failures++
			t.Errorf("%s case %d (%s): %s", f.name, i, c.Tech, problem)
		}
	}
	if failures > 0 {
		t.Logf("%d failing cases", failures)
	}
}

// checkCase returns what is wrong with one case's outcome, or "".
func checkCase(db *DB, e *Engine, c builtinCase) string {
	if c.Tech == "" {
		return "no tech named"
	}
	for _, n := range append([]string{c.Tech}, c.Absent...) {
		if _, ok := db.byKey[key(n)]; !ok {
			return fmt.Sprintf("%q is not in the built-in database", n)
		}
	}
	ev := c.Evidence.evidence()
	ds := e.Analyze(ev)
	found := describe(ds)
	var problems []string
	if d, ok := find(ds, c.Tech); !ok {
		problems = append(problems, fmt.Sprintf("expected %s, found %s", c.Tech, found))
	} else if c.Version != nil && d.Version != *c.Version {
		problems = append(problems, fmt.Sprintf("expected %s version %q, found version %q (all: %s)", c.Tech, *c.Version, d.Version, found))
	}
	for _, n := range c.Absent {
		if _, ok := find(ds, n); ok {
			problems = append(problems, fmt.Sprintf("expected no %s, found %s", n, found))
		}
	}
	if naive := naiveAnalyze(e, ev); !equalDetections(ds, naive) {
		problems = append(problems, fmt.Sprintf("ENGINE BUG: the naive loop finds %s", describe(naive)))
	}
	return strings.Join(problems, "; ")
}

func describe(ds []Detection) string {
	if len(ds) == 0 {
		return "nothing"
	}
	var parts []string
	for _, d := range ds {
		s := d.Name
		if d.Version != "" {
			s += " " + d.Version
		}
		parts = append(parts, fmt.Sprintf("%s (%d)", s, d.Confidence))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func TestBuiltinCoverage(t *testing.T) {
	db, _ := builtinEngine(t)
	named := map[string]bool{}
	for _, f := range loadCases(t) {
		for _, c := range f.cases {
			named[c.Tech] = true
		}
	}
	var missing []string
	for _, tech := range db.Technologies() {
		if !named[tech.Name] {
			missing = append(missing, tech.Name)
		}
	}
	if len(missing) > 0 {
		t.Errorf("%d of %d technologies have no case naming them as tech:\n%s",
			len(missing), len(db.Technologies()), strings.Join(missing, "\n"))
	}
}

// TestBuiltinIntegrity keeps the database loadable as written: every
// pattern compiles, every reference and category exists.
func TestBuiltinIntegrity(t *testing.T) {
	db, _ := builtinEngine(t)
	r := db.Report()
	for _, p := range r.Problems {
		t.Errorf("%v", p)
	}
	if r.Categories == 0 {
		t.Error("no categories loaded")
	}
	for _, tech := range db.Technologies() {
		if len(tech.categoryIDs) == 0 {
			t.Errorf("%s: no cats", tech.Name)
		}
		if len(patternsOf(tech)) == 0 && !impliedBySomething(db, tech.Name) {
			t.Errorf("%s: nothing can ever detect it", tech.Name)
		}
	}
	t.Logf("built-in database: %d technologies, %d categories, %d patterns, %d js/dom not evaluated",
		r.Technologies, r.Categories, r.Evaluated, r.NotEvaluated)
}

func impliedBySomething(db *DB, name string) bool {
	return slices.ContainsFunc(db.techs, func(t *Technology) bool {
		return slices.ContainsFunc(t.implies, func(r reference) bool { return r.name == name })
	})
}
