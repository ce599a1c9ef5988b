package main

import (
	"net/netip"
	"time"

	"github.com/surveyor/surveyor/pkg/config"
	"github.com/surveyor/surveyor/pkg/netguard"
	"github.com/surveyor/surveyor/pkg/service"
	"github.com/surveyor/surveyor/services/ingest/internal/ratelimit"
)

// settings are ingest's variables beyond every binary's (service.Common).
type settings struct {
	HTTPAddr        string
	Embedded        bool
	DataDir         string
	Targets         netguard.Policy
	CacheTTL        time.Duration
	RateLimit       float64
	TrustedProxies  []netip.Prefix
	TechTokens      []string
	FingerprintsDir string
}

func (c *settings) Register(s *config.Set) {
	s.String(&c.HTTPAddr, "HTTP_ADDR", "127.0.0.1:8080", "address of the API, /healthz, /readyz and /metrics")
	s.Bool(&c.Embedded, "EMBEDDED_NATS", false, "start an embedded JetStream server listening on NATS_URL's first address")
	s.String(&c.DataDir, "DATA_DIR", "./data", "JetStream storage of the embedded server")
	service.TargetsVar(s, &c.Targets)
	service.CacheTTLVar(s, &c.CacheTTL)
	s.Float(&c.RateLimit, "RATE_LIMIT", 0, "requests per second per client IP (bursts of twice that); 0: off")
	c.TrustedProxies = nil
	s.Func("TRUSTED_PROXIES", "", "proxies (IPs or CIDRs, comma separated) whose X-Forwarded-For is believed",
		func(v string) (err error) {
			c.TrustedProxies, err = ratelimit.ParseTrusted(config.Split(v))
			return err
		})
	s.List(&c.TechTokens, "TECHNOLOGIES_API_TOKENS", "bearer tokens accepted by /technologies, comma separated; empty: the area is off")
	service.FingerprintsDirVar(s, &c.FingerprintsDir)
}

// description is what deploy/settings/ingest.json holds.
func description() service.Binary { return service.Describe("HTTP_ADDR", &settings{}) }
