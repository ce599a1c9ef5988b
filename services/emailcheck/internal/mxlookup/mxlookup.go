// Package mxlookup finds where mail for a domain goes: its MX hosts in
// preference order, the null MX that says "no mail here" (RFC 7505), or the
// domain itself when it has an address but no MX (RFC 5321 5.1). It keeps
// "the domain does not exist" (an invalid address) apart from "DNS did not
// answer" (we do not know).
package mxlookup

import (
	"context"
	"errors"

	"github.com/surveyor/surveyor/pkg/job"
	"github.com/surveyor/surveyor/pkg/resolver"
)

// Result is the "dns" part of the email result and what the rest of the
// validation needs to know.
type Result struct {
	job.EmailDNS
	// Hosts are the mail hosts to try, in order.
	Hosts []string
	// NoDomain: NXDOMAIN or no way to deliver (null MX, neither MX nor
	// address): the address cannot receive mail.
	NoDomain bool
	// Temporary: the lookup failed (SERVFAIL, timeout); nothing is known.
	Temporary bool
}

// Lookup resolves domain (lower-case A-labels). The resolver caches
// answers for their TTLs, so repeated lookups of a domain are cheap.
func Lookup(ctx context.Context, r *resolver.Resolver, domain string) Result {
	res := Result{EmailDNS: job.EmailDNS{MX: []job.MX{}}}
	fail := func(err error) Result {
		res.Error = err.Error()
		res.Temporary = !errors.Is(err, resolver.ErrNotFound)
		res.NoDomain = !res.Temporary
		return res
	}
	mxs, err := r.LookupMX(ctx, domain)
	if err != nil {
		return fail(err)
	}
	for _, mx := range mxs {
		res.MX = append(res.MX, job.MX{Host: mx.Host, Preference: mx.Preference})
	}
	if len(mxs) == 1 && mxs[0].Host == "." {
		res.NullMX, res.NoDomain = true, true
		res.Error = "the domain declares that it accepts no mail (null MX)"
		return res
	}
	for _, mx := range mxs {
		if mx.Host != "." && mx.Host != "" {
			res.Hosts = append(res.Hosts, mx.Host)
		}
	}
	if len(res.Hosts) > 0 {
		res.HasMX = true
		return res
	}
	// No MX: the domain's own address is the implicit MX.
	addrs, err := r.LookupNetIP(ctx, "ip", domain)
	if err == nil && len(addrs) == 0 {
		err = resolver.ErrNotFound
	}
	if err != nil {
		if errors.Is(err, resolver.ErrNotFound) {
			res.NoDomain = true
			res.Error = "the domain has neither MX records nor an address"
			return res
		}
		return fail(err)
	}
	res.FallbackA = true
	res.Hosts = []string{domain}
	return res
}
