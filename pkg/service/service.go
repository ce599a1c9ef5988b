// Package service is the common start-up of Surveyor's binaries, ingest
// and the workers alike: load the settings (Common plus each binary's own),
// connect to NATS, declare the streams (waiting for JetStream), answer
// readiness, and stop cleanly on SIGINT or SIGTERM.
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
	"github.com/surveyor/surveyor/pkg/jobstore"
)

// Process is a started binary: its settings are loaded and its logger
// made.
type Process struct {
	Name   string // the NATS connection name and the logs' service
	Common Common
	Log    *slog.Logger
}

// Start loads Common and the binary's own components from the
// environment. A bad value ends the process here, with every bad variable
// named, before anything connects.
func Start(name string, own ...config.Component) *Process {
	common, err := Load(config.Environ, own...)
	if err != nil {
		Fatal(newLogger(name, slog.LevelInfo), "configuration", err)
	}
	return &Process{Name: name, Common: common, Log: newLogger(name, common.LogLevel)}
}

// Load reads Common and own from lookup as Start does, returning what
// would stop the binary.
func Load(lookup config.Lookup, own ...config.Component) (Common, error) {
	var c Common
	err := config.Load(lookup, append([]config.Component{&c}, own...)...)
	return c, err
}

// newLogger is a JSON logger on stderr tagged with the service name.
func newLogger(name string, level slog.Level) *slog.Logger {
	h := slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: level})
	return slog.New(h).With("service", name)
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

// Conn is a process's link to JetStream.
type Conn struct {
	NC    *nats.Conn
	JS    jetstream.JetStream
	Jobs  *jobstore.Store // set by SetUp
	ready atomic.Bool
}

// Connect connects to NATS_URL. The client keeps reconnecting on its own,
// so a server that is not up yet is not an error here.
func (p *Process) Connect(opts ...nats.Option) (*Conn, error) {
	nc, err := bus.Connect(p.Common.NATSURL, p.Name, opts...)
	if err != nil {
		return nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, err
	}
	return &Conn{NC: nc, JS: js}, nil
}

// SetUp declares the streams and opens the job store, waiting for
// JetStream as long as ctx lives: on one machine a worker may start before
// the embedded server listens, and a cluster may still be forming. It
// returns ctx's error when ctx ends first.
func (c *Conn) SetUp(ctx context.Context, cfg bus.Config, log *slog.Logger) error {
	for {
		err := errors.New("not connected to NATS yet")
		if c.NC.IsConnected() {
			sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			err = bus.Setup(sctx, c.JS, cfg)
			cancel()
			if err == nil {
				c.Jobs, err = jobstore.Open(ctx, c.JS)
				return err
			}
		}
		log.Warn("waiting for JetStream", "url", c.NC.Opts.Servers, "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// SetReady marks the process ready to serve once the connection is.
func (c *Conn) SetReady() { c.ready.Store(true) }

// Ready is the /readyz check: NATS connected and the process set up.
func (c *Conn) Ready() error {
	if s := c.NC.Status(); s != nats.CONNECTED {
		return errors.New("nats " + s.String())
	}
	if !c.ready.Load() {
		return errors.New("not set up yet")
	}
	return nil
}
