package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/surveyor/surveyor/pkg/config"
	"github.com/surveyor/surveyor/pkg/fpfetch/fpfetchtest"
)

// The environment names the directory and URL; a flag overrides the
// revision; the summary counts what was installed.
func TestRun(t *testing.T) {
	archive := fpfetchtest.TarGz(t,
		fpfetchtest.Entry{Name: "src/categories.json", Body: `{"1": {"name": "CMS", "priority": 1}}`},
		fpfetchtest.Entry{Name: "src/technologies/a.json", Body: `{"Acme CMS": {"cats": [1], "headers": {"X-Acme": ""}}}`})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /db/flagrev.tar.gz", func(w http.ResponseWriter, r *http.Request) { w.Write(archive) })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	dir := filepath.Join(t.TempDir(), "fingerprints")
	env := config.Map(map[string]string{
		"FINGERPRINTS_DIR":      dir,
		"FINGERPRINTS_URL":      srv.URL + "/db/{rev}.tar.gz",
		"FINGERPRINTS_REVISION": "envrev",
	})
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"-rev", "flagrev"}, env, &out, &errOut); err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	if !strings.Contains(out.String(), "1 technologies, 1 categories, 0 problems") {
		t.Errorf("summary %q", out.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "technologies", "a.json")); err != nil {
		t.Error(err)
	}

	// The environment's revision is not served: the error says so and
	// that the directory is unchanged.
	err := run(context.Background(), nil, env, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "404") || !strings.Contains(err.Error(), dir+" is unchanged") {
		t.Errorf("err %v", err)
	}
	if err := run(context.Background(), nil, config.Map(map[string]string{"FINGERPRINTS_TIMEOUT": "soon"}), &out, &errOut); err == nil ||
		!strings.Contains(err.Error(), "FINGERPRINTS_TIMEOUT") {
		t.Errorf("bad variable: err %v", err)
	}
}
