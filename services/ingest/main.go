// Command ingest is Surveyor's public HTTP API: it validates job requests,
// stores them in JetStream and serves their status and results. With
// EMBEDDED_NATS=true it also runs the JetStream server, for one machine.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/valyala/fasthttp"

	"github.com/surveyor/surveyor/pkg/bus"
	"github.com/surveyor/surveyor/pkg/service"
	"github.com/surveyor/surveyor/pkg/techstore"
	"github.com/surveyor/surveyor/services/ingest/internal/api"
	"github.com/surveyor/surveyor/services/ingest/internal/intake"
	"github.com/surveyor/surveyor/services/ingest/internal/ratelimit"
	"github.com/surveyor/surveyor/services/ingest/internal/techapi"
)

func main() {
	var cfg settings
	p := service.Start("ingest", &cfg)
	log := p.Log
	ctx, stop := service.Signals()
	defer stop()

	// NoEcho: ingest reads what workers and other replicas publish, never
	// its own messages, and its accept announcements would otherwise all
	// come back to it.
	opts := []nats.Option{nats.NoEcho()}
	if cfg.Embedded {
		srv, err := bus.StartEmbedded(p.Common.NATSURL, cfg.DataDir)
		if err != nil {
			service.Fatal(log, "embedded NATS (NATS_URL, DATA_DIR)", err)
		}
		defer srv.Shutdown()
		opts = append(opts, srv.InProcess())
		log.Info("embedded NATS listening", "url", srv.ClientURL(), "data_dir", cfg.DataDir)
	}
	c, err := p.Connect(opts...)
	if err != nil {
		service.Fatal(log, "nats connect (NATS_URL)", err)
	}
	defer c.NC.Close()
	if err := c.SetUp(ctx, p.Common.Bus, log); err != nil {
		if ctx.Err() != nil {
			return // stopped before NATS was reachable
		}
		service.Fatal(log, "job store", err)
	}
	in := intake.New(c.JS, c.Jobs, intake.Config{CacheTTL: cfg.CacheTTL, ResultTTL: p.Common.Bus.ResultTTL,
		MaxQueued: int(p.Common.Bus.JobsMaxMsgs), Log: log})
	go in.Run(ctx)

	a := &api.API{Jobs: in, Targets: cfg.Targets, Ready: c.Ready}
	if len(cfg.TechTokens) > 0 {
		a.Technologies, err = technologies(ctx, c.JS, cfg.TechTokens, cfg.FingerprintsDir, log)
		if err != nil {
			service.Fatal(log, "technologies area", err)
		}
	}
	if cfg.RateLimit > 0 {
		limiter := ratelimit.New(cfg.RateLimit, cfg.TrustedProxies)
		a.Limit = func(c *fasthttp.RequestCtx) bool {
			peer, _ := netip.AddrFromSlice(c.RemoteIP())
			return limiter.Allow(limiter.Client(peer, string(c.Request.Header.Peek("X-Forwarded-For"))), time.Now())
		}
	}
	srv := a.Server()
	ln, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		service.Fatal(log, "listen (HTTP_ADDR)", err)
	}
	c.SetReady()
	fmt.Fprintf(os.Stderr, "Surveyor API listening on http://%s\n", ln.Addr())
	log.Info("ingest listening", "addr", ln.Addr().String())
	go func() {
		<-ctx.Done()
		srv.ShutdownWithContext(context.Background())
	}()
	if err := srv.Serve(ln); err != nil {
		service.Fatal(log, "http server", err)
	}
	log.Info("ingest stopped")
}

// technologies builds the /technologies area; without tokens it stays off
// (404) and nothing is loaded.
func technologies(ctx context.Context, js jetstream.JetStream, tokens []string, dir string, log *slog.Logger) (fasthttp.RequestHandler, error) {
	base, problems, err := techstore.Base(dir)
	if err != nil {
		return nil, err
	}
	for _, p := range problems {
		log.Warn("fingerprint not usable", "technology", p.Technology, "field", p.Field, "pattern", p.Pattern, "reason", p.Reason)
	}
	store, err := techstore.Open(ctx, js)
	if err != nil {
		return nil, err
	}
	return techapi.New(tokens, store, base).Handler, nil
}
