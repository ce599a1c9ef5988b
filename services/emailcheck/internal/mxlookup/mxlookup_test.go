package mxlookup

import (
	"context"
	"reflect"
	"testing"

	"github.com/miekg/dns"

	"github.com/surveyor/surveyor/pkg/job"
	"github.com/surveyor/surveyor/pkg/resolver"
	"github.com/surveyor/surveyor/services/emailcheck/internal/testservers"
)

func TestLookup(t *testing.T) {
	d := testservers.StartDNS(t)
	d.Add(t,
		"two.test. 60 IN MX 20 backup.two.test.",
		"two.test. 60 IN MX 10 primary.two.test.",
		"null.test. 60 IN MX 0 .",
		"aonly.test. 60 IN A 192.0.2.10",
		"nothing.test. 60 IN TXT \"v=spf1 -all\"",
		"v6only.test. 60 IN AAAA 2001:db8::25",
	)
	d.Fail("broken.test", dns.RcodeServerFailure)
	r := resolver.New(d.Addr)
	r.HostsFile = ""
	ctx := context.Background()

	got := Lookup(ctx, r, "two.test")
	want := []job.MX{{Host: "primary.two.test", Preference: 10}, {Host: "backup.two.test", Preference: 20}}
	if !got.HasMX || !reflect.DeepEqual(got.MX, want) || !reflect.DeepEqual(got.Hosts, []string{"primary.two.test", "backup.two.test"}) {
		t.Errorf("two MX: %+v", got)
	}
	if got.NoDomain || got.Temporary || got.Error != "" {
		t.Errorf("two MX flagged: %+v", got)
	}

	got = Lookup(ctx, r, "null.test")
	if !got.NullMX || !got.NoDomain || got.HasMX || len(got.Hosts) != 0 {
		t.Errorf("null MX: %+v", got)
	}

	for _, dom := range []string{"aonly.test", "v6only.test"} {
		got = Lookup(ctx, r, dom)
		if !got.FallbackA || got.HasMX || !reflect.DeepEqual(got.Hosts, []string{dom}) || got.NoDomain {
			t.Errorf("%s: %+v", dom, got)
		}
	}

	got = Lookup(ctx, r, "nothing.test")
	if !got.NoDomain || got.Temporary || got.FallbackA || got.Error == "" {
		t.Errorf("no MX, no address: %+v", got)
	}

	got = Lookup(ctx, r, "missing.test")
	if !got.NoDomain || got.Temporary || got.Error == "" {
		t.Errorf("NXDOMAIN: %+v", got)
	}

	got = Lookup(ctx, r, "broken.test")
	if got.NoDomain || !got.Temporary || got.Error == "" {
		t.Errorf("SERVFAIL: %+v", got)
	}
	if got.MX == nil {
		t.Error("mx must encode as [] not null")
	}
}
