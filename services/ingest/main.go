// Command ingest is Surveyor's public HTTP API: it validates job requests,
// stores them in JetStream and serves their status and results. With
// EMBEDDED_NATS=true it also runs the JetStream server, for one machine.
package main

import (
	"context"
	"errors"
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
	"github.com/surveyor/surveyor/pkg/config"
	"github.com/surveyor/surveyor/pkg/jobstore"
	"github.com/surveyor/surveyor/pkg/obs"
	"github.com/surveyor/surveyor/pkg/service"
	"github.com/surveyor/surveyor/pkg/techstore"
	"github.com/surveyor/surveyor/services/ingest/internal/api"
	"github.com/surveyor/surveyor/services/ingest/internal/intake"
	"github.com/surveyor/surveyor/services/ingest/internal/ratelimit"
	"github.com/surveyor/surveyor/services/ingest/internal/techapi"
)

func main() {
	log := obs.Logger("ingest")
	r := config.FromEnv()
	common := service.ReadCommon(r)
	embedded := r.Bool("EMBEDDED_NATS", false)
	dataDir := r.String("DATA_DIR", "./data")
	httpAddr := r.String("HTTP_ADDR", "127.0.0.1:8080")
	allowPrivate := r.Bool("ALLOW_PRIVATE_TARGETS", false)
	rateLimit := r.Float("RATE_LIMIT", 0)
	trusted := r.List("TRUSTED_PROXIES")
	techTokens := r.List("TECHNOLOGIES_API_TOKENS")
	fingerprintsDir := r.String("FINGERPRINTS_DIR", "")
	var limiter *ratelimit.Limiter
	if rateLimit > 0 {
		var err error
		if limiter, err = ratelimit.New(rateLimit, trusted); err != nil {
			r.Fail("TRUSTED_PROXIES", "%v", err)
		}
	}
	if err := r.Err(); err != nil {
		service.Fatal(log, "configuration", err)
	}

	ctx, stop := service.Signals()
	defer stop()

	var opts []nats.Option
	if embedded {
		srv, err := bus.StartEmbedded(common.NATSURL, dataDir)
		if err != nil {
			service.Fatal(log, "embedded NATS (NATS_URL, DATA_DIR)", err)
		}
		defer srv.Shutdown()
		opts = append(opts, srv.InProcess())
		log.Info("embedded NATS listening", "url", srv.ClientURL(), "data_dir", dataDir)
	}
	nc, err := bus.Connect(common.NATSURL, "ingest", opts...)
	if err != nil {
		service.Fatal(log, "nats connect", err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		service.Fatal(log, "jetstream", err)
	}
	for {
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err = bus.Setup(sctx, js, common.Bus)
		cancel()
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return
		}
		log.Warn("waiting for JetStream", "err", err)
		time.Sleep(time.Second)
	}
	store, err := jobstore.Open(ctx, js)
	if err != nil {
		service.Fatal(log, "job store", err)
	}
	in := intake.New(js, store, intake.Config{CacheTTL: common.CacheTTL, ResultTTL: common.Bus.ResultTTL,
		MaxQueued: int(common.Bus.JobsMaxMsgs), Log: log})
	go in.Run(ctx)

	a := &api.API{
		Jobs:         in,
		AllowPrivate: allowPrivate,
		Ready: func() error {
			if nc.Status() != nats.CONNECTED {
				return errors.New("nats " + nc.Status().String())
			}
			return nil
		},
	}
	if len(techTokens) > 0 {
		a.Technologies, err = technologies(ctx, js, techTokens, fingerprintsDir, log)
		if err != nil {
			service.Fatal(log, "technologies area", err)
		}
	}
	if limiter != nil {
		a.Limit = func(c *fasthttp.RequestCtx) bool {
			peer, _ := netip.AddrFromSlice(c.RemoteIP())
			return limiter.Allow(limiter.Client(peer, string(c.Request.Header.Peek("X-Forwarded-For"))), time.Now())
		}
	}
	srv := &fasthttp.Server{
		Handler:            a.Handler,
		ErrorHandler:       api.ErrorHandler,
		Name:               "surveyor",
		MaxRequestBodySize: api.MaxBody,
		ReadTimeout:        10 * time.Second,
		WriteTimeout:       10 * time.Second,
		IdleTimeout:        60 * time.Second,
	}
	ln, err := net.Listen("tcp", httpAddr)
	if err != nil {
		service.Fatal(log, "listen (HTTP_ADDR)", err)
	}
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
