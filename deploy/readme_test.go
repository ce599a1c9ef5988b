package deploy

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// readmeRow is one row of the README's configuration table.
type readmeRow struct {
	names []string // the variables the row documents
	def   string   // its default cell
}

// readmeConfiguration reads the table under "## Configuration".
func readmeConfiguration(t *testing.T) []readmeRow {
	t.Helper()
	data, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "\n## Configuration\n")
	if !ok {
		t.Fatal("README has no Configuration section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	code := regexp.MustCompile("`([^`]*)`")
	var rows []readmeRow
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue // not a row of the table, or its header
		}
		r := readmeRow{def: strings.TrimSpace(cells[2])}
		for _, m := range code.FindAllStringSubmatch(cells[1], -1) {
			r.names = append(r.names, m[1])
		}
		rows = append(rows, r)
	}
	if len(rows) < 10 {
		t.Fatalf("found %d rows in the README's configuration table", len(rows))
	}
	return rows
}

// The README documents the variables the binaries read, with their
// defaults, and every shared one is in its table.
func TestREADMEConfigurationTable(t *testing.T) {
	bs := binaries(t)
	documented := map[string]bool{}
	for _, r := range readmeConfiguration(t) {
		for _, name := range r.names {
			documented[name] = true
			if !readByAny(t, name) {
				t.Errorf("README documents %s, which no binary reads", name)
			}
		}
		if len(r.names) != 1 {
			continue
		}
		// The defaults of every binary that reads the variable, when they
		// agree; a row of per-binary defaults says so in words.
		defaults := map[string]bool{}
		for _, b := range bs {
			if d, ok := b.defaultOf(r.names[0]); ok {
				defaults[d] = true
			}
		}
		if len(defaults) != 1 {
			continue
		}
		var want string
		for d := range defaults {
			want = d
		}
		switch {
		case strings.HasPrefix(r.def, "`"):
			if got, _, _ := strings.Cut(r.def[1:], "`"); got != want {
				t.Errorf("README: %s defaults to %q, the code to %q", r.names[0], got, want)
			}
		case strings.HasPrefix(r.def, "empty") && want != "":
			t.Errorf("README: %s defaults to empty, the code to %q", r.names[0], want)
		}
	}
	// The workers' own knobs are documented by prefix (and in settings/).
	own := regexp.MustCompile(`^(SCANNER|SITEMAPPER|EMAILCHECK)_`)
	for name, b := range bs {
		for _, v := range b.Variables {
			if !documented[v.Name] && !own.MatchString(v.Name) {
				t.Errorf("%s reads %s, which the README's configuration table does not document", name, v.Name)
			}
		}
	}
}
