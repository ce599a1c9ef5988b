// Package bustest starts a real embedded JetStream server for tests, with
// Surveyor's streams declared, and cleans it up when the test ends.
package bustest

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/surveyor/surveyor/pkg/bus"
)

// Env is a running server and a client connected to it.
type Env struct {
	Server *bus.Embedded
	Conn   *nats.Conn
	JS     jetstream.JetStream
	Config bus.Config
}

// Start runs a server on a free loopback port with storage in a temporary
// directory. cfg may be the zero value.
func Start(t testing.TB, cfg bus.Config) *Env {
	t.Helper()
	if cfg.ResultTTL == 0 {
		cfg.ResultTTL = time.Hour
	}
	srv, err := bus.StartEmbedded("nats://127.0.0.1:0", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	nc, js := connect(t, srv.ClientURL(), "test")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := bus.Setup(ctx, js, cfg); err != nil {
		t.Fatal(err)
	}
	return &Env{Server: srv, Conn: nc, JS: js, Config: cfg}
}

// Connect opens another client to the same server, as a second process
// would.
func (e *Env) Connect(t testing.TB, name string) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	return connect(t, e.Server.ClientURL(), name)
}

// ConnectInProcess opens a client that reaches the server without TCP, as
// ingest does when it embeds the server.
func (e *Env) ConnectInProcess(t testing.TB, name string) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	return connect(t, "", name, e.Server.InProcess())
}

func connect(t testing.TB, url, name string, opts ...nats.Option) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	nc, err := bus.Connect(url, name, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return nc, js
}
