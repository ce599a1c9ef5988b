package main

import (
	"strings"
	"testing"
	"time"

	"github.com/surveyor/surveyor/pkg/config"
	"github.com/surveyor/surveyor/pkg/netguard"
	"github.com/surveyor/surveyor/pkg/service/servicetest"
)

func TestSettings(t *testing.T) {
	cfg := &settings{}
	_, rt, err := emailcheck(cfg).Load(config.Map(map[string]string{
		"ALLOW_PRIVATE_TARGETS": "true", "DNS_SERVER": "127.0.0.1:53", "CACHE_TTL": "1h", "EMAILCHECK_CONCURRENCY": "10",
	}))
	if err != nil || rt.Concurrency != 10 || rt.AdminAddr != "127.0.0.1:9103" || cfg.Verify.Targets != netguard.AllowPrivate ||
		cfg.Verify.DNSServer != "127.0.0.1:53" || cfg.Verify.CacheTTL != time.Hour || cfg.Verify.SMTPPort != 25 {
		t.Fatalf("got %+v %+v, %v", rt, cfg.Verify, err)
	}
	if _, rt, _ := emailcheck(&settings{}).Load(config.Map(nil)); rt.Concurrency != 64 {
		t.Errorf("default EMAILCHECK_CONCURRENCY %d, want 64", rt.Concurrency)
	}
	// Validate runs too: the SMTP identity is checked.
	bad := map[string]string{
		"ALLOW_PRIVATE_TARGETS": "maybe", "DNS_SERVER": "dns", "CACHE_TTL": "forever",
		"EMAILCHECK_CONCURRENCY": "10001", "SMTP_HELO": "bad host", "SMTP_PORT": "0",
		"SMTP_PROXY": "http://proxy.example:3128",
	}
	_, _, err = emailcheck(&settings{}).Load(config.Map(bad))
	for name := range bad {
		if err == nil || !strings.Contains(err.Error(), name+":") {
			t.Errorf("error %v does not name %s", err, name)
		}
	}
}

func TestDescription(t *testing.T) {
	servicetest.CheckDescription(t, "emailcheck", emailcheck(&settings{}).Describe())
}
