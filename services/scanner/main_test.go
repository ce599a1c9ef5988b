package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/surveyor/surveyor/pkg/bus"
	"github.com/surveyor/surveyor/pkg/bus/bustest"
	"github.com/surveyor/surveyor/pkg/config"
	"github.com/surveyor/surveyor/pkg/job"
	"github.com/surveyor/surveyor/pkg/netguard"
	"github.com/surveyor/surveyor/pkg/service"
	"github.com/surveyor/surveyor/pkg/service/servicetest"
	"github.com/surveyor/surveyor/pkg/techstore"
	"github.com/surveyor/surveyor/pkg/worker"
)

const page = `<!doctype html><html><head><title>Acme</title>
<meta name="generator" content="Acme CMS 2.1.4"></head><body><p>Hello</p></body></html>`

// TestCustomFingerprintsReachEveryReplica starts two scanners as two
// replicas would run (each on its own NATS connection, each following the
// TECHNOLOGIES bucket), then adds and removes a custom technology and checks
// both apply each change without a restart.
func TestCustomFingerprintsReachEveryReplica(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Server", "nginx/1.25.3")
		w.Header().Set("X-Dir-Tech", "1")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, page)
	}))
	defer srv.Close()
	dir := t.TempDir()
	// One usable and one unusable pattern: the bad one is logged, not fatal.
	os.WriteFile(filepath.Join(dir, "extra.json"), []byte(`{"Dir Tech": {"headers": {"X-Dir-Tech": ""}, "html": "(unclosed"}}`), 0o644)

	env := bustest.Start(t, bus.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var replicas []worker.Handler
	for i := range 2 {
		_, js := env.Connect(t, fmt.Sprintf("scanner-%d", i))
		log := slog.New(slog.DiscardHandler)
		b, err := prepare(t, map[string]string{"ALLOW_PRIVATE_TARGETS": "true", "FINGERPRINTS_DIR": dir}, log)
		if err != nil {
			t.Fatal(err)
		}
		h, err := b(ctx, &service.Env{JS: js, Log: log})
		if err != nil {
			t.Fatal(err)
		}
		replicas = append(replicas, h)
	}
	detected := func(h worker.Handler) map[string]string {
		t.Helper()
		res, err := h.Handle(ctx, &job.Job{ID: "t", Kind: job.Scan, URL: srv.URL + "/", Options: job.CanonicalOptions(nil)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, d := range res.(*job.ScanResult).Technologies {
			out[d.Name] = d.Version
		}
		return out
	}
	waitAll := func(what string, ok func(map[string]string) bool) {
		t.Helper()
		for i, h := range replicas {
			deadline := time.Now().Add(5 * time.Second)
			for got := detected(h); !ok(got); got = detected(h) {
				if time.Now().After(deadline) {
					t.Fatalf("replica %d: %s: detected %v", i, what, got)
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
	}

	for i, h := range replicas {
		got := detected(h)
		if _, ok := got["Nginx"]; !ok {
			t.Fatalf("replica %d: built-in Nginx not detected: %v", i, got)
		}
		if _, ok := got["Dir Tech"]; !ok {
			t.Fatalf("replica %d: FINGERPRINTS_DIR technology not detected: %v", i, got)
		}
		if _, ok := got["Acme CMS"]; ok {
			t.Fatalf("replica %d: Acme CMS detected before it was defined", i)
		}
	}

	store, err := techstore.Open(ctx, env.JS)
	if err != nil {
		t.Fatal(err)
	}
	def := `{"Acme CMS": {"cats": [1], "meta": {"generator": "^Acme CMS ([\\d.]+)\\;version:\\1"}}}`
	if _, _, err := store.Put(ctx, "acme-cms", []byte(def)); err != nil {
		t.Fatal(err)
	}
	waitAll("after PUT", func(m map[string]string) bool { return m["Acme CMS"] == "2.1.4" })

	if err := store.Delete(ctx, "acme-cms"); err != nil {
		t.Fatal(err)
	}
	waitAll("after DELETE", func(m map[string]string) bool {
		_, acme := m["Acme CMS"]
		_, nginx := m["Nginx"]
		return !acme && nginx
	})
}

// prepare loads the scanner's settings from env as start-up does and
// prepares its handler.
func prepare(t *testing.T, env map[string]string, log *slog.Logger) (service.Build, error) {
	t.Helper()
	cfg := &settings{}
	if _, _, err := scanner(cfg).Load(config.Map(env)); err != nil {
		t.Fatal(err)
	}
	return cfg.prepare(log)
}

// A broken FINGERPRINTS_DIR stops the scanner before it connects anywhere.
func TestBadFingerprintsDirStopsStart(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "broken.json"), []byte(`{"A": `), 0o644)
	_, err := prepare(t, map[string]string{"FINGERPRINTS_DIR": dir}, slog.New(slog.DiscardHandler))
	if err == nil || !strings.Contains(err.Error(), "FINGERPRINTS_DIR") {
		t.Fatalf("err %v, want one naming FINGERPRINTS_DIR", err)
	}
}

func TestSettings(t *testing.T) {
	cfg := &settings{}
	_, rt, err := scanner(cfg).Load(config.Map(map[string]string{
		"ALLOW_PRIVATE_TARGETS": "1", "DNS_SERVER": "127.0.0.1:53", "SCANNER_TIMEOUT": "7s",
	}))
	if err != nil || rt.Concurrency != 32 || rt.AdminAddr != "127.0.0.1:9101" ||
		cfg.Scan.Targets != netguard.AllowPrivate || cfg.Scan.DNSServer != "127.0.0.1:53" || cfg.Scan.Timeout != 7*time.Second {
		t.Fatalf("got %+v %+v, %v", rt, cfg.Scan, err)
	}
	bad := map[string]string{
		"ALLOW_PRIVATE_TARGETS": "maybe", "DNS_SERVER": "resolver", "SCANNER_CONCURRENCY": "0",
		"SCANNER_MAX_REDIRECTS": "11", "SCANNER_BODY_LIMIT": "12", "SCANNER_TIMEOUT": "soon", "LOG_LEVEL": "loud",
	}
	_, _, err = scanner(&settings{}).Load(config.Map(bad))
	for name := range bad {
		if err == nil || !strings.Contains(err.Error(), name+":") {
			t.Errorf("error %v does not name %s", err, name)
		}
	}
}

func TestDescription(t *testing.T) {
	servicetest.CheckDescription(t, "scanner", scanner(&settings{}).Describe())
}
