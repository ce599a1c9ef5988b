package main

import (
	"strings"
	"testing"

	"github.com/surveyor/surveyor/pkg/config"
	"github.com/surveyor/surveyor/pkg/netguard"
	"github.com/surveyor/surveyor/pkg/service/servicetest"
)

func TestSettings(t *testing.T) {
	cfg := &settings{}
	_, rt, err := sitemapper(cfg).Load(config.Map(map[string]string{
		"ALLOW_PRIVATE_TARGETS": "true", "DNS_SERVER": "[::1]:53", "SITEMAPPER_PER_HOST": "8",
	}))
	if err != nil || rt.Concurrency != 4 || rt.AdminAddr != "127.0.0.1:9102" ||
		cfg.Crawl.Targets != netguard.AllowPrivate || cfg.Crawl.DNSServer != "[::1]:53" || cfg.Crawl.PerHost != 8 {
		t.Fatalf("got %+v %+v, %v", rt, cfg.Crawl, err)
	}
	// Validate runs too: the budget is checked against the timeout.
	bad := map[string]string{
		"ALLOW_PRIVATE_TARGETS": "maybe", "DNS_SERVER": "::1", "SITEMAPPER_CONCURRENCY": "x",
		"SITEMAPPER_TIMEOUT": "2m", "SITEMAPPER_JOB_BUDGET": "1m",
	}
	_, _, err = sitemapper(&settings{}).Load(config.Map(bad))
	for name := range bad {
		if name != "SITEMAPPER_TIMEOUT" && (err == nil || !strings.Contains(err.Error(), name+":")) {
			t.Errorf("error %v does not name %s", err, name)
		}
	}
}

func TestDescription(t *testing.T) {
	servicetest.CheckDescription(t, "sitemapper", sitemapper(&settings{}).Describe())
}
