package deploy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// binary is settings/<name>.json: what one Surveyor binary declares, as
// pkg/service.Binary writes it. The binaries' own tests regenerate these
// files from the code and fail when one is stale, so the tests here check
// the manifests against the code without a copy of its variable names.
type binary struct {
	Listen    string `json:"listen"` // variable of the probes' and metrics' address
	Variables []struct {
		Name    string `json:"name"`
		Default string `json:"default"`
	} `json:"variables"`
	Worker *struct {
		Consumer      string `json:"consumer"`
		Concurrency   string `json:"concurrency"`
		MaxAckPending int    `json:"max_ack_pending"`
	} `json:"worker"`
}

// reads reports whether the binary declares the variable name.
func (b binary) reads(name string) bool {
	_, ok := b.defaultOf(name)
	return ok
}

func (b binary) defaultOf(name string) (string, bool) {
	for _, v := range b.Variables {
		if v.Name == name {
			return v.Default, true
		}
	}
	return "", false
}

// goRuntimeEnv are variables of the Go runtime itself, which a deployment
// may set on any binary.
var goRuntimeEnv = map[string]bool{"GOMEMLIMIT": true, "GOGC": true}

var loadBinaries = sync.OnceValues(func() (map[string]binary, error) {
	files, err := filepath.Glob(filepath.Join("settings", "*.json"))
	if err != nil {
		return nil, err
	}
	out := map[string]binary{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var b binary
		if err := json.Unmarshal(data, &b); err != nil {
			return nil, err
		}
		out[strings.TrimSuffix(filepath.Base(f), ".json")] = b
	}
	return out, nil
})

// binaries are the four Surveyor binaries by name.
func binaries(t *testing.T) map[string]binary {
	t.Helper()
	bs, err := loadBinaries()
	if err != nil {
		t.Fatalf("settings/*.json: %v", err)
	}
	if len(bs) != 4 {
		t.Fatalf("settings/ describes %d binaries, want ingest, scanner, sitemapper and emailcheck", len(bs))
	}
	return bs
}

// workers are the binaries that take jobs, by name.
func workers(t *testing.T) map[string]binary {
	t.Helper()
	ws := map[string]binary{}
	for name, b := range binaries(t) {
		if b.Worker != nil {
			ws[name] = b
		}
	}
	return ws
}

// readByAny reports whether some binary reads name: the test for
// environment given to every binary alike (a shared ConfigMap, a compose
// anchor). The services ignore a misspelt name silently, so the tests
// reject any name no binary declares.
func readByAny(t *testing.T, name string) bool {
	t.Helper()
	if goRuntimeEnv[name] {
		return true
	}
	for _, b := range binaries(t) {
		if b.reads(name) {
			return true
		}
	}
	return false
}

func TestSettingsDescribeEveryBinary(t *testing.T) {
	bs := binaries(t)
	for _, name := range []string{"ingest", "scanner", "sitemapper", "emailcheck"} {
		b, ok := bs[name]
		if !ok {
			t.Errorf("no settings/%s.json", name)
			continue
		}
		if !b.reads(b.Listen) || !b.reads("NATS_URL") {
			t.Errorf("%s: does not declare its listen variable %q or NATS_URL", name, b.Listen)
		}
		if w := b.Worker; (name == "ingest") != (w == nil) {
			t.Errorf("%s: worker section %+v", name, w)
		} else if w != nil && (!b.reads(w.Concurrency) || w.Consumer == "" || w.MaxAckPending < 1) {
			t.Errorf("%s: worker section %+v", name, w)
		}
	}
}
