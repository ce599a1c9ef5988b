// Package servicetest keeps deploy/settings/<binary>.json equal to what the
// binaries declare: each binary's test calls CheckDescription, and
// `go test ./services/... -run TestDescription -update` rewrites the files.
package servicetest

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/surveyor/surveyor/pkg/service"
)

var update = flag.Bool("update", false, "rewrite deploy/settings/*.json from the code")

// CheckDescription fails t when deploy/settings/<name>.json differs from b.
func CheckDescription(t *testing.T, name string, b service.Binary) {
	t.Helper()
	want, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, '\n')
	path := filepath.Join(moduleRoot(t), "deploy", "settings", name+".json")
	if *update {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("%s is not what %s declares (%v); regenerate it with\n\tgo test ./services/... -run TestDescription -update",
			path, name, err)
	}
}

// moduleRoot is the nearest directory above the test's with a go.mod.
func moduleRoot(t *testing.T) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test")
		}
		dir = parent
	}
}
