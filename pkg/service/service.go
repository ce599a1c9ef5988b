// Package service is the common start-up of Surveyor's binaries: read the
// shared configuration, connect to NATS, declare the streams, serve the
// admin endpoints, and stop cleanly on SIGINT or SIGTERM.
package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/surveyor/surveyor/pkg/bus"
	"github.com/surveyor/surveyor/pkg/config"
	"github.com/surveyor/surveyor/pkg/job"
	"github.com/surveyor/surveyor/pkg/jobstore"
	"github.com/surveyor/surveyor/pkg/obs"
	"github.com/surveyor/surveyor/pkg/worker"
)

// Common is the configuration every process shares (contract §2).
type Common struct {
	NATSURL  string
	Bus      bus.Config
	CacheTTL time.Duration
}

// ReadCommon reads the shared variables.
func ReadCommon(r *config.Reader) Common {
	c := Common{
		NATSURL: r.String("NATS_URL", "nats://127.0.0.1:4222"),
		Bus: bus.Config{
			Replicas:     r.Int("STREAM_REPLICAS", 1, 1, 5),
			ResultTTL:    r.Duration("RESULT_TTL", 168*time.Hour),
			JobsMaxMsgs:  int64(r.Int("JOBS_MAX_MSGS", 1_000_000, 1, 1<<40)),
			JobsMaxBytes: int64(r.Int("JOBS_MAX_BYTES", 1<<30, 1024, 1<<50)),
		},
		CacheTTL: r.Duration("CACHE_TTL", 24*time.Hour),
	}
	return c
}

// Signals returns a context that ends on SIGINT or SIGTERM.
func Signals() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// Fatal logs err and exits non-zero; start-up errors end here.
func Fatal(log *slog.Logger, msg string, err error) {
	log.Error(msg, "err", err)
	fmt.Fprintf(os.Stderr, "%s: %v\n", msg, err)
	os.Exit(1)
}

// Env is what a worker's Build receives once NATS is reachable.
type Env struct {
	Common Common
	JS     jetstream.JetStream
	Log    *slog.Logger
}

// Build makes a worker's handler once NATS is reachable.
type Build func(ctx context.Context, env *Env) (worker.Handler, error)

// Worker describes one worker binary.
type Worker struct {
	Kind               job.Kind
	ConcurrencyVar     string // e.g. SCANNER_CONCURRENCY
	DefaultConcurrency int
	DefaultAdminAddr   string // e.g. 127.0.0.1:9101
	// Configure reads the worker's own variables before anything connects,
	// so a bad value stops the process at once and names the variable
	// (record it in r); it returns what builds the handler later.
	Configure func(r *config.Reader, log *slog.Logger) (Build, error)
}

// RunWorker is the whole main of a worker binary.
func RunWorker(w Worker) {
	name := string(w.Kind) + "-worker"
	log := obs.Logger(name)
	r := config.FromEnv()
	common := ReadCommon(r)
	adminAddr := r.String("ADMIN_ADDR", w.DefaultAdminAddr)
	rcfg := worker.Config{
		Kind:        w.Kind,
		Concurrency: r.Int(w.ConcurrencyVar, w.DefaultConcurrency, 1, 10000),
		AckWait:     r.Duration("WORKER_ACK_WAIT", 30*time.Second),
		MaxDeliver:  r.Int("WORKER_MAX_DELIVER", 5, 1, 100),
		Grace:       r.Duration("WORKER_GRACE", 20*time.Second),
		Log:         log,
	}
	build, err := w.Configure(r, log)
	if err == nil {
		err = r.Err()
	}
	if err != nil {
		Fatal(log, "configuration", err)
	}

	ctx, stop := Signals()
	defer stop()
	nc, err := bus.Connect(common.NATSURL, name)
	if err != nil {
		Fatal(log, "nats connect", err)
	}
	defer nc.Drain()
	js, err := jetstream.New(nc)
	if err != nil {
		Fatal(log, "jetstream", err)
	}
	var ready atomic.Bool
	go func() {
		admin := &obs.Admin{Addr: adminAddr, Registry: obs.Default, Ready: func() error {
			if nc.Status() != nats.CONNECTED {
				return errors.New("nats " + nc.Status().String())
			}
			if !ready.Load() {
				return errors.New("streams not set up yet")
			}
			return nil
		}}
		if err := admin.Serve(ctx, func(a string) { log.Info("admin listening", "addr", a) }); err != nil {
			Fatal(log, "admin server (ADMIN_ADDR)", err)
		}
	}()

	if err := setupWithRetry(ctx, js, common.Bus, log); err != nil {
		return // ctx ended before NATS was reachable
	}
	store, err := jobstore.Open(ctx, js)
	if err != nil {
		Fatal(log, "job store", err)
	}
	h, err := build(ctx, &Env{Common: common, JS: js, Log: log})
	if err != nil {
		Fatal(log, "setup", err)
	}
	ready.Store(true)
	log.Info("worker started", "kind", w.Kind, "concurrency", rcfg.Concurrency)
	if err := worker.New(js, store, rcfg, h).Run(ctx); err != nil {
		Fatal(log, "worker", err)
	}
	log.Info("worker stopped")
}

// setupWithRetry declares the streams, waiting for NATS to come up: on one
// machine the workers may start before the embedded server is listening.
func setupWithRetry(ctx context.Context, js jetstream.JetStream, cfg bus.Config, log *slog.Logger) error {
	for {
		err := errors.New("not connected to NATS yet")
		if js.Conn().IsConnected() {
			sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			err = bus.Setup(sctx, js, cfg)
			cancel()
			if err == nil {
				return nil
			}
		}
		log.Warn("waiting for JetStream", "url", js.Conn().Opts.Servers, "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}
