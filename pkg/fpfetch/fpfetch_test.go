package fpfetch

import (
	"archive/tar"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/surveyor/surveyor/pkg/fingerprint"
	"github.com/surveyor/surveyor/pkg/fpfetch/fpfetchtest"
)

type entry = fpfetchtest.Entry

const (
	categories = `{"1": {"name": "CMS", "priority": 1}}`
	acme       = `{"Acme CMS": {"cats": [1], "website": "https://acme.example",
		"meta": {"generator": "^Acme CMS ([\\d.]+)\\;version:\\1"}}}`
	beta = `{"Beta Shop": {"cats": [1], "website": "https://beta.example", "headers": {"X-Beta": ""}}}`
)

// community is the shape of the fork's GitHub archive: one top directory,
// a pax global header, files the database does not use.
func community(extra ...entry) []entry {
	top := "webappanalyzer-rev1/"
	return append([]entry{
		{Name: "pax_global_header", Typeflag: tar.TypeXGlobalHeader},
		{Name: top, Typeflag: tar.TypeDir},
		{Name: top + "README.md", Body: "# webappanalyzer"},
		{Name: top + "src/", Typeflag: tar.TypeDir},
		{Name: top + "src/categories.json", Body: categories},
		{Name: top + "src/groups.json", Body: `{"1": {"name": "Content"}}`},
		{Name: top + "src/technologies/", Typeflag: tar.TypeDir},
		{Name: top + "src/technologies/a.json", Body: acme},
		{Name: top + "src/technologies/b.json", Body: beta},
		{Name: top + "src/images/icons/Acme.svg", Body: "<svg/>"},
	}, extra...)
}

func build(t *testing.T, entries []entry) []byte { return fpfetchtest.TarGz(t, entries...) }

// serve answers GET /archive/<rev>.tar.gz with body, 404 elsewhere.
func serve(t *testing.T, rev string, body []byte) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /archive/"+rev+".tar.gz", func(w http.ResponseWriter, r *http.Request) { w.Write(body) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// testLimits are small, so bombs of a few KB compressed exceed them.
var testLimits = Limits{Download: 64 << 10, Stream: 1 << 20, File: 16 << 10, Total: 32 << 10, Files: 10}

// setup makes dir holding an old database and the options to replace it
// from srv.
func setup(t *testing.T, srv *httptest.Server) Options {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "fingerprints")
	for name, body := range map[string]string{"categories.json": categories, "technologies/old.json": beta} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return Options{Dir: dir, URL: srv.URL + "/archive/{rev}.tar.gz", Revision: "rev1",
		Timeout: 5 * time.Second, Limits: testLimits}
}

// tree reads every file below dir, by relative path.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestFetchInstalls(t *testing.T) {
	body := build(t, community())
	srv := serve(t, "rev1", body)
	o := setup(t, srv)
	sum := sha256.Sum256(body)
	o.SHA256 = strings.ToUpper(hex.EncodeToString(sum[:]))
	res, err := Fetch(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if res.SHA256 != hex.EncodeToString(sum[:]) || res.URL != srv.URL+"/archive/rev1.tar.gz" {
		t.Errorf("result %+v", res)
	}
	got := tree(t, o.Dir)
	want := map[string]string{"categories.json": categories, "technologies/a.json": acme, "technologies/b.json": beta}
	if !maps.Equal(got, want) {
		t.Errorf("installed %v\nwant %v", got, want)
	}
	db, err := fingerprint.LoadDir(o.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if db.Report().Technologies != 2 || res.Report.Technologies != 2 || res.Report.Categories != 1 {
		t.Errorf("report %+v, result %+v", db.Report(), res.Report)
	}
	noLeftovers(t, o.Dir)
}

// A first fetch creates the directory and its parents.
func TestFetchCreates(t *testing.T) {
	srv := serve(t, "rev1", build(t, community()))
	o := setup(t, srv)
	o.Dir = filepath.Join(t.TempDir(), "data", "fingerprints")
	if _, err := Fetch(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if got := tree(t, o.Dir); len(got) != 3 {
		t.Errorf("installed %v", got)
	}
}

// The archive GitHub serves sits behind a redirect (to codeload.github.com).
func TestFetchRedirects(t *testing.T) {
	body := build(t, community())
	mux := http.NewServeMux()
	mux.HandleFunc("GET /archive/rev1.tar.gz", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/codeload/rev1", http.StatusFound)
	})
	mux.HandleFunc("GET /codeload/rev1", func(w http.ResponseWriter, r *http.Request) { w.Write(body) })
	mux.HandleFunc("GET /loop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/loop", http.StatusFound)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	o := setup(t, srv)
	if _, err := Fetch(context.Background(), o); err != nil {
		t.Fatalf("one redirect: %v", err)
	}
	o.URL = srv.URL + "/loop"
	before := tree(t, o.Dir)
	_, err := Fetch(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "redirects") {
		t.Fatalf("redirect loop: err %v", err)
	}
	if got := tree(t, o.Dir); !maps.Equal(got, before) {
		t.Errorf("directory changed after a failed fetch: %v", got)
	}
}

func TestFetchRefuses(t *testing.T) {
	top := "webappanalyzer-rev1/src/"
	zeros := strings.Repeat("\x00", 4<<20)
	many := community()
	for _, c := range "cdefghijkl" {
		many = append(many, entry{Name: top + "technologies/" + string(c) + ".json", Body: "{}"})
	}
	big := make([]byte, 100<<10)
	rand.Read(big)
	var wrongSum = strings.Repeat("ab", 32)
	cases := []struct {
		name    string
		archive []byte // served at the revision's URL; nil: 404
		sha     string
		want    string
	}{
		{"wrong checksum", build(t, community()), wrongSum, "SHA-256 is"},
		{"404", nil, "", "404 Not Found"},
		{"not gzip", []byte("<html>rate limited</html>"), "", "not a .tar.gz"},
		{"download over the limit", big, "", "over the limit of 65536 bytes"},
		{"bomb in a database file", build(t, community(entry{Name: top + "technologies/z.json", Body: zeros})), "",
			"over the limit of 16384 per file"},
		{"bomb in a skipped file", build(t, community(entry{Name: top + "images/huge.bin", Body: zeros})), "",
			"compression bomb"},
		{"total over the limit", build(t, community(
			entry{Name: top + "technologies/x.json", Body: strings.Repeat(" ", 15<<10)},
			entry{Name: top + "technologies/y.json", Body: strings.Repeat(" ", 15<<10)},
			entry{Name: top + "technologies/z.json", Body: strings.Repeat(" ", 15<<10)})), "",
			"over the limit of 32768 bytes in all"},
		{"too many files", build(t, many), "", "over 10 database files"},
		{"traversal", build(t, community(entry{Name: "webappanalyzer-rev1/../x", Body: "x"})), "", "leaves the archive"},
		{"traversal into the database", build(t, community(entry{Name: top + "technologies/../../../../x.json", Body: "{}"})), "",
			"leaves the archive"},
		{"absolute path", build(t, community(entry{Name: "/etc/x.json", Body: "{}"})), "", "absolute path"},
		{"symlink", build(t, community(entry{Name: top + "technologies/z.json", Typeflag: tar.TypeSymlink, Link: "/etc/passwd"})), "",
			"links are refused"},
		{"hard link", build(t, community(entry{Name: top + "technologies/z.json", Typeflag: tar.TypeLink, Link: top + "technologies/a.json"})), "",
			"links are refused"},
		{"twice", build(t, community(entry{Name: top + "technologies/a.json", Body: acme})), "", "appears twice"},
		{"no technologies", build(t, []entry{{Name: top + "categories.json", Body: categories}}), "", "no src/technologies"},
		{"no categories", build(t, []entry{{Name: top + "technologies/a.json", Body: acme}}), "", "no src/categories.json"},
		{"empty technologies", build(t, []entry{{Name: top + "categories.json", Body: categories},
			{Name: top + "technologies/a.json", Body: "{}"}}), "", "defines no technology"},
		{"invalid JSON", build(t, community(entry{Name: top + "technologies/z.json", Body: `{"Zed": {"cats": [1],`})), "",
			"does not load: technologies/z.json"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mux := http.NewServeMux()
			if c.archive != nil {
				mux.HandleFunc("GET /archive/rev1.tar.gz", func(w http.ResponseWriter, r *http.Request) { w.Write(c.archive) })
			}
			srv := httptest.NewServer(mux)
			defer srv.Close()
			o := setup(t, srv)
			o.SHA256 = c.sha
			before := tree(t, o.Dir)
			_, err := Fetch(context.Background(), o)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want one saying %q", err, c.want)
			}
			if got := tree(t, o.Dir); !maps.Equal(got, before) {
				t.Errorf("directory changed after a failed fetch: %v", got)
			}
			noLeftovers(t, o.Dir)
		})
	}
}

// A server that stops sending is abandoned after the timeout, and the old
// database stays.
func TestFetchTimeout(t *testing.T) {
	body := build(t, community())
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Write(body[:len(body)/2])
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	defer srv.Close()
	defer close(stop)
	o := setup(t, srv)
	o.URL = srv.URL + "/slow"
	o.Timeout = 300 * time.Millisecond
	before := tree(t, o.Dir)
	_, err := Fetch(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "timed out after 300ms") {
		t.Fatalf("err %v, want a timeout", err)
	}
	if got := tree(t, o.Dir); !maps.Equal(got, before) {
		t.Errorf("directory changed after a failed fetch: %v", got)
	}
	noLeftovers(t, o.Dir)
}

func TestFetchOptions(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		o    Options
		want string
	}{
		{Options{URL: "http://x/{rev}", Revision: "r"}, "no directory"},
		{Options{Dir: dir, URL: "http://x/{rev}"}, "needs a revision"},
		{Options{Dir: dir, URL: "file:///etc/passwd"}, "not an http(s) URL"},
		{Options{Dir: dir, URL: "http://x/a.tar.gz", SHA256: "abc"}, "not 64 hex digits"},
	}
	for _, c := range cases {
		if _, err := Fetch(context.Background(), c.o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err %v, want %q", c.o, err, c.want)
		}
	}
}

func TestPlace(t *testing.T) {
	for name, want := range map[string]string{
		"webappanalyzer-abc/src/technologies/a.json": "technologies/a.json",
		"src/technologies/_.json":                    "technologies/_.json",
		"x/src/categories.json":                      "categories.json",
		"./src/categories.json":                      "categories.json",
		"x/src/groups.json":                          "",
		"x/src/technologies/a.txt":                   "",
		"x/src/technologies/.hidden.json":            "",
		"x/src/technologies/sub/a.json":              "",
		"x/y/src/technologies/a.json":                "",
		"pax_global_header":                          "",
	} {
		if got, err := place(name); got != want || err != nil {
			t.Errorf("place(%q) = %q, %v; want %q", name, got, err, want)
		}
	}
}

// noLeftovers checks that the staging directory beside dir is gone.
func noLeftovers(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(filepath.Dir(dir))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != filepath.Base(dir) {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

// The fingerprint package's fixture of the community database's quirks
// (names differing only in case, look-around, fields without patterns)
// installs: the fetch takes the database as the loader does.
func TestFetchCommunityFixture(t *testing.T) {
	const fixture = "../fingerprint/testdata/community"
	files, err := filepath.Glob(fixture + "/technologies/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("fixture: %v %v", files, err)
	}
	files = append(files, fixture+"/categories.json")
	entries := []entry{{Name: "pax_global_header", Typeflag: tar.TypeXGlobalHeader}}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(fixture, f)
		entries = append(entries, entry{Name: "webappanalyzer-rev1/src/" + filepath.ToSlash(rel), Body: string(b)})
	}
	srv := serve(t, "rev1", build(t, entries))
	o := setup(t, srv)
	res, err := Fetch(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	merged := false
	for _, p := range res.Report.Problems {
		merged = merged || (p.Field == "name" && strings.EqualFold(p.Technology, p.Pattern))
	}
	if res.Report.Technologies < 5 || !merged {
		t.Errorf("report %+v: want the fixture's technologies, names differing in case merged", res.Report)
	}
	if got := tree(t, o.Dir); len(got) != len(files) {
		t.Errorf("installed %d files, want %d", len(got), len(files))
	}
}
