// Command scanner consumes jobs.scan and answers what a website runs
// (contract §4). Its fingerprints are the built-in database, the files of
// FINGERPRINTS_DIR and the custom technologies of the TECHNOLOGIES bucket;
// the engine is rebuilt whenever the bucket changes, so a PUT or DELETE on
// /technologies reaches every replica without a restart.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/surveyor/surveyor/pkg/config"
	"github.com/surveyor/surveyor/pkg/fingerprint"
	"github.com/surveyor/surveyor/pkg/job"
	"github.com/surveyor/surveyor/pkg/obs"
	"github.com/surveyor/surveyor/pkg/service"
	"github.com/surveyor/surveyor/pkg/techstore"
	"github.com/surveyor/surveyor/pkg/worker"
	"github.com/surveyor/surveyor/services/scanner/internal/scan"
)

func main() {
	// Most of the scanner's live heap is the fingerprint engine, which does
	// not change between scans, while every scan leaves a few hundred KB of
	// garbage. At the default GOGC of 100 the collector ran after every
	// heap's worth of garbage and marked the engine again each time; at 200
	// it runs half as often, for about 10 MB more memory. GOGC overrides.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(200)
	}
	service.RunWorker(scanner(&settings{}))
}

// scanner is the scanner binary with its settings in cfg.
func scanner(cfg *settings) service.Worker {
	return service.Worker{
		Kind:               job.Scan,
		ConcurrencyVar:     "SCANNER_CONCURRENCY",
		DefaultConcurrency: 32,
		DefaultAdminAddr:   "127.0.0.1:9101",
		Settings:           cfg,
		Prepare:            cfg.prepare,
	}
}

// settings are the scanner's variables beyond every worker's.
type settings struct {
	Scan            scan.Config
	FingerprintsDir string
}

func (c *settings) Register(s *config.Set) {
	service.TargetsVar(s, &c.Scan.Targets)
	service.DNSServerVar(s, &c.Scan.DNSServer)
	c.Scan.Register(s)
	service.FingerprintsDirVar(s, &c.FingerprintsDir)
}

// firstLoadWait bounds how long start-up waits for the custom fingerprints
// before it scans with the built-in ones alone.
const firstLoadWait = 10 * time.Second

// prepare loads the built-in and FINGERPRINTS_DIR fingerprints before
// anything connects, so an unreadable directory stops the process at start.
func (c *settings) prepare(log *slog.Logger) (service.Build, error) {
	base, err := baseDB(c.FingerprintsDir, log)
	if err != nil {
		return nil, fmt.Errorf("FINGERPRINTS_DIR: %w", err)
	}
	return func(ctx context.Context, env *service.Env) (worker.Handler, error) {
		return build(ctx, env, c.Scan, base)
	}, nil
}

// build starts following the custom fingerprints for as long as ctx lives
// and returns the scanner, once the first custom set is in (or after
// firstLoadWait).
func build(ctx context.Context, env *service.Env, cfg scan.Config, base *fingerprint.DB) (worker.Handler, error) {
	store, err := techstore.Open(ctx, env.JS)
	if err != nil {
		return nil, err
	}
	store.Log = env.Log
	eng := newEngines(base, env.Log)
	go store.Follow(ctx, eng.apply)
	select {
	case <-eng.loaded:
	case <-time.After(firstLoadWait):
		env.Log.Warn("custom fingerprints not loaded yet; scanning with the others meanwhile")
		eng.engine.CompareAndSwap(nil, fingerprint.NewEngine(base))
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return scan.New(cfg, eng.current), nil
}

// baseDB is techstore.Base with its unusable patterns logged by technology
// and field; they do not stop the scanner.
func baseDB(dir string, log *slog.Logger) (*fingerprint.DB, error) {
	db, problems, err := techstore.Base(dir)
	if err != nil {
		return nil, err
	}
	for _, p := range problems {
		log.Warn("fingerprint not usable", "technology", p.Technology, "field", p.Field, "pattern", p.Pattern, "reason", p.Reason)
	}
	r := db.Report()
	log.Info("fingerprints loaded", "dir", dir, "technologies", r.Technologies, "patterns", r.Patterns, "not_evaluated", r.NotEvaluated)
	return db, nil
}

var (
	reloads = obs.Default.NewCounterVec("surveyor_fingerprint_reloads_total",
		"Engines rebuilt because the custom technologies changed.")
	customCount atomic.Int64
)

func init() {
	obs.Default.NewGaugeFunc("surveyor_fingerprint_custom_technologies",
		"Custom technologies in the engine in use.", "", func() map[string]float64 {
			return map[string]float64{"": float64(customCount.Load())}
		})
}

// engines holds the engine in use; apply builds the next one aside and
// swaps it in, so scans never wait on a rebuild and never see half of one.
type engines struct {
	base   *fingerprint.DB
	log    *slog.Logger
	engine atomic.Pointer[fingerprint.Engine]
	loaded chan struct{} // closed by the first apply
	once   sync.Once
}

// newEngines starts empty: the first apply builds the first engine, so the
// database is not compiled twice at start.
func newEngines(base *fingerprint.DB, log *slog.Logger) *engines {
	return &engines{base: base, log: log, loaded: make(chan struct{})}
}

func (e *engines) current() *fingerprint.Engine { return e.engine.Load() }

func (e *engines) apply(custom *fingerprint.DB) {
	db := fingerprint.Merge(e.base, custom)
	e.engine.Store(fingerprint.NewEngine(db))
	n := len(custom.Technologies())
	customCount.Store(int64(n))
	reloads.With().Inc()
	e.log.Info("fingerprint engine rebuilt", "custom", n, "technologies", len(db.Technologies()))
	e.once.Do(func() { close(e.loaded) })
}
