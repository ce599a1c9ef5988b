package inspect

import (
	"context"
	"errors"
	"strings"
	"sync"

	"github.com/miekg/dns"

	"github.com/surveyor/surveyor/pkg/job"
	"github.com/surveyor/surveyor/pkg/resolver"
)

// DNS looks up host's records in parallel.
func DNS(ctx context.Context, r *resolver.Resolver, host string) *job.DNSInfo {
	info := &job.DNSInfo{A: []string{}, AAAA: []string{}, CNAME: []string{}, MX: []job.MX{}, NS: []string{}, TXT: []string{}}
	var mu sync.Mutex
	fail := func(what string, err error) {
		if err == nil || errors.Is(err, resolver.ErrNotFound) {
			return
		}
		mu.Lock()
		info.Errors = append(info.Errors, what+": "+err.Error())
		mu.Unlock()
	}
	addrs := func(qtype uint16, dst *[]string) {
		ans, err := r.Lookup(ctx, host, qtype)
		fail(dns.TypeToString[qtype], err)
		if err != nil {
			return
		}
		for _, rr := range ans.Records {
			switch v := rr.(type) {
			case *dns.A:
				*dst = append(*dst, v.A.String())
			case *dns.AAAA:
				*dst = append(*dst, v.AAAA.String())
			}
		}
	}
	var wg sync.WaitGroup
	wg.Go(func() { addrs(dns.TypeA, &info.A) })
	wg.Go(func() { addrs(dns.TypeAAAA, &info.AAAA) })
	wg.Go(func() {
		c, err := r.LookupCNAME(ctx, host)
		fail("CNAME", err)
		if c != "" {
			info.CNAME = append(info.CNAME, c)
		}
	})
	wg.Go(func() {
		mx, err := r.LookupMX(ctx, host)
		fail("MX", err)
		for _, m := range mx {
			info.MX = append(info.MX, job.MX{Host: m.Host, Preference: m.Preference})
		}
	})
	wg.Go(func() {
		ns, err := r.LookupNS(ctx, host)
		fail("NS", err)
		info.NS = append(info.NS, ns...)
	})
	wg.Go(func() {
		txt, err := r.LookupTXT(ctx, host)
		fail("TXT", err)
		info.TXT = append(info.TXT, txt...)
	})
	wg.Wait()
	return info
}

// DNSEvidence is the section in the form fingerprints match: record type
// to values, as in Wappalyzer's "dns" patterns.
func DNSEvidence(d *job.DNSInfo) map[string][]string {
	ev := map[string][]string{}
	if len(d.CNAME) > 0 {
		ev["CNAME"] = d.CNAME
	}
	if len(d.NS) > 0 {
		ev["NS"] = d.NS
	}
	if len(d.TXT) > 0 {
		ev["TXT"] = d.TXT
	}
	for _, m := range d.MX {
		ev["MX"] = append(ev["MX"], strings.ToLower(m.Host))
	}
	return ev
}
