package main

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/surveyor/surveyor/pkg/config"
	"github.com/surveyor/surveyor/pkg/netguard"
	"github.com/surveyor/surveyor/pkg/service"
	"github.com/surveyor/surveyor/pkg/service/servicetest"
)

func TestSettings(t *testing.T) {
	var cfg settings
	c, err := service.Load(config.Map(map[string]string{
		"ALLOW_PRIVATE_TARGETS": "true", "CACHE_TTL": "1h", "TRUSTED_PROXIES": "10.0.0.0/8, 192.0.2.7",
		"TECHNOLOGIES_API_TOKENS": "a,b", "NATS_URL": "nats://a:1,nats://b:2",
	}), &cfg)
	if err != nil || cfg.Targets != netguard.AllowPrivate || cfg.CacheTTL != time.Hour || cfg.HTTPAddr != "127.0.0.1:8080" ||
		len(cfg.TrustedProxies) != 2 || cfg.TrustedProxies[1] != netip.MustParsePrefix("192.0.2.7/32") ||
		len(cfg.TechTokens) != 2 || c.NATSURL != "nats://a:1,nats://b:2" {
		t.Fatalf("got %+v %+v, %v", cfg, c, err)
	}
	bad := map[string]string{
		"ALLOW_PRIVATE_TARGETS": "maybe", "CACHE_TTL": "0", "RATE_LIMIT": "-1", "TRUSTED_PROXIES": "10.0.0.0/8,proxy",
		"EMBEDDED_NATS": "yes please", "RESULT_TTL": "1d",
	}
	_, err = service.Load(config.Map(bad), &settings{})
	for name := range bad {
		if err == nil || !strings.Contains(err.Error(), name+":") {
			t.Errorf("error %v does not name %s", err, name)
		}
	}
}

func TestDescription(t *testing.T) {
	servicetest.CheckDescription(t, "ingest", description())
}
