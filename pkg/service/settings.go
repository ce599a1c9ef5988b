package service

import (
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/surveyor/surveyor/pkg/bus"
	"github.com/surveyor/surveyor/pkg/config"
	"github.com/surveyor/surveyor/pkg/netguard"
)

// Common is the configuration every binary reads (contract §2): where
// NATS is, how the streams are set up, and how much is logged.
type Common struct {
	NATSURL  string
	Bus      bus.Config
	LogLevel slog.Level
}

// Register declares the variables of Common.
func (c *Common) Register(s *config.Set) {
	s.String(&c.NATSURL, "NATS_URL", "nats://127.0.0.1:4222", "NATS server(s), comma separated")
	s.Int(&c.Bus.Replicas, "STREAM_REPLICAS", 1, 1, 5, "replicas of every stream (3 on a cluster)")
	s.Duration(&c.Bus.ResultTTL, "RESULT_TTL", 168*time.Hour, "how long results and job status are kept")
	s.Int64(&c.Bus.JobsMaxMsgs, "JOBS_MAX_MSGS", 1_000_000, 1, 1<<40, "jobs the queue holds; beyond it ingest answers 429")
	s.Int64(&c.Bus.JobsMaxBytes, "JOBS_MAX_BYTES", 1<<30, 1024, 1<<50, "bytes the queue holds; beyond it ingest answers 429")
	s.Func("LOG_LEVEL", "info", "debug, info, warn or error (JSON logs on stderr)", func(v string) error {
		switch strings.ToLower(v) {
		case "debug":
			c.LogLevel = slog.LevelDebug
		case "info":
			c.LogLevel = slog.LevelInfo
		case "warn":
			c.LogLevel = slog.LevelWarn
		case "error":
			c.LogLevel = slog.LevelError
		default:
			return fmt.Errorf("%q is not debug, info, warn or error", v)
		}
		return nil
	})
}

// The variables below are read by more than one binary but not by all.
// Each is declared here, once; a binary's settings bind it to the field of
// the component that uses it, so no component parses it a second time.

// TargetsVar declares ALLOW_PRIVATE_TARGETS.
func TargetsVar(s *config.Set, p *netguard.Policy) {
	s.Func("ALLOW_PRIVATE_TARGETS", netguard.PublicOnly.String(),
		"true allows scanning, crawling and SMTP probing of loopback, private, link-local and other non-public addresses; "+
			"a comma-separated list of CIDRs (10.20.0.0/16,fd00:1::/48; a bare IP is one address) allows only those",
		func(v string) (err error) {
			*p, err = netguard.ParsePolicy(v)
			return err
		})
}

// DNSServerVar declares DNS_SERVER.
func DNSServerVar(s *config.Set, p *string) {
	*p = ""
	s.Func("DNS_SERVER", "", "host:port of the DNS resolver; empty: the system resolvers (/etc/hosts is read first)",
		func(v string) error {
			if _, port, err := net.SplitHostPort(v); err != nil || port == "" {
				return fmt.Errorf("%q is not host:port", v)
			}
			*p = v
			return nil
		})
}

// CacheTTLVar declares CACHE_TTL.
func CacheTTLVar(s *config.Set, p *time.Duration) {
	s.Duration(p, "CACHE_TTL", 24*time.Hour, "how long a finished job (and emailcheck's per-address answer) is reused without force")
}

// FingerprintsDirVar declares FINGERPRINTS_DIR.
func FingerprintsDirVar(s *config.Set, p *string) {
	s.String(p, "FINGERPRINTS_DIR", "", "extra Wappalyzer-format technology files loaded on top of the built-in database")
}

// Runtime is the worker runtime's part of a worker binary's configuration.
type Runtime struct {
	AdminAddr   string
	Concurrency int
	AckWait     time.Duration
	MaxDeliver  int
	Grace       time.Duration
}

// register declares the runtime's variables with w's names and defaults.
func (c *Runtime) register(s *config.Set, w *Worker) {
	s.String(&c.AdminAddr, "ADMIN_ADDR", w.DefaultAdminAddr, "address of /healthz, /readyz and /metrics")
	s.Int(&c.Concurrency, w.ConcurrencyVar, w.DefaultConcurrency, 1, 10000, "jobs this process runs at once")
	s.Duration(&c.AckWait, "WORKER_ACK_WAIT", 30*time.Second, "silence after which a job is delivered to another worker")
	s.Int(&c.MaxDeliver, "WORKER_MAX_DELIVER", 5, 1, 100, "attempts before a job ends failed")
	s.Duration(&c.Grace, "WORKER_GRACE", 20*time.Second, "time in-flight jobs get to finish at SIGTERM")
}
