package service

import (
	"context"
	"log/slog"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/surveyor/surveyor/pkg/bus"
	"github.com/surveyor/surveyor/pkg/config"
	"github.com/surveyor/surveyor/pkg/job"
	"github.com/surveyor/surveyor/pkg/obs"
	"github.com/surveyor/surveyor/pkg/worker"
)

// consumerMaxAckPending caps the jobs in flight on a kind's consumer across
// all its replicas; replicas beyond it times their concurrency get no jobs,
// which is why deployment files read it (see Describe).
const consumerMaxAckPending = 1000

// Env is what a worker's Build receives once NATS is reachable.
type Env struct {
	JS  jetstream.JetStream
	Log *slog.Logger
}

// Build makes a worker's handler once NATS is reachable. A handler that
// also has a Close method is closed once the worker has stopped and its
// jobs have ended, so it can hang up connections it pools.
type Build func(ctx context.Context, env *Env) (worker.Handler, error)

// Worker describes one worker binary.
type Worker struct {
	Kind               job.Kind
	ConcurrencyVar     string // e.g. SCANNER_CONCURRENCY
	DefaultConcurrency int
	DefaultAdminAddr   string // e.g. 127.0.0.1:9101
	// Settings declares the worker's own variables and binds the shared
	// ones it uses; they are loaded with Common and the runtime's.
	Settings config.Component
	// Prepare runs once the settings are loaded and before anything
	// connects, so a bad file stops the process at start as a bad value
	// does; it returns what builds the handler later.
	Prepare func(log *slog.Logger) (Build, error)
}

// runtime declares the worker runtime's variables into rt.
func (w *Worker) runtime(rt *Runtime) config.Component {
	return config.RegisterFunc(func(s *config.Set) { rt.register(s, w) })
}

// RunWorker is the whole main of a worker binary.
func RunWorker(w Worker) {
	var rt Runtime
	p := Start(string(w.Kind)+"-worker", w.runtime(&rt), w.Settings)
	build, err := w.Prepare(p.Log)
	if err != nil {
		Fatal(p.Log, "configuration", err)
	}

	ctx, stop := Signals()
	defer stop()
	c, err := p.Connect()
	if err != nil {
		Fatal(p.Log, "nats connect (NATS_URL)", err)
	}
	defer c.NC.Drain()
	go func() {
		admin := &obs.Admin{Addr: rt.AdminAddr, Registry: obs.Default, Ready: c.Ready}
		if err := admin.Serve(ctx, func(a string) { p.Log.Info("admin listening", "addr", a) }); err != nil {
			Fatal(p.Log, "admin server (ADMIN_ADDR)", err)
		}
	}()

	if err := c.SetUp(ctx, p.Common.Bus, p.Log); err != nil {
		if ctx.Err() != nil {
			return // stopped before NATS was reachable
		}
		Fatal(p.Log, "job store", err)
	}
	h, err := build(ctx, &Env{JS: c.JS, Log: p.Log})
	if err != nil {
		Fatal(p.Log, "setup", err)
	}
	c.SetReady()
	p.Log.Info("worker started", "kind", w.Kind, "concurrency", rt.Concurrency)
	rcfg := worker.Config{
		Kind:          w.Kind,
		Concurrency:   rt.Concurrency,
		AckWait:       rt.AckWait,
		MaxDeliver:    rt.MaxDeliver,
		Grace:         rt.Grace,
		MaxAckPending: consumerMaxAckPending,
		Log:           p.Log,
	}
	if err := worker.New(c.JS, c.Jobs, rcfg, h).Run(ctx); err != nil {
		Fatal(p.Log, "worker", err)
	}
	if closer, ok := h.(interface{ Close() }); ok {
		closer.Close()
	}
	p.Log.Info("worker stopped")
}

// Load reads the worker binary's settings from lookup as RunWorker does.
func (w Worker) Load(lookup config.Lookup) (Common, Runtime, error) {
	var rt Runtime
	c, err := Load(lookup, w.runtime(&rt), w.Settings)
	return c, rt, err
}

// Describe lists the worker binary's variables and what deployment files
// size it by.
func (w Worker) Describe() Binary {
	var rt Runtime
	b := Describe("ADMIN_ADDR", w.runtime(&rt), w.Settings)
	b.Worker = &WorkerInfo{
		Consumer:      bus.ConsumerName(w.Kind),
		Concurrency:   w.ConcurrencyVar,
		MaxAckPending: consumerMaxAckPending,
	}
	return b
}
