// Package resolver is Surveyor's DNS client. The scanner and emailcheck need
// record types the standard library does not expose with their rcodes
// (NXDOMAIN versus SERVFAIL decides "invalid" versus "unknown" for an email),
// and a configurable server (DNS_SERVER). Answers are cached for their TTL so
// a burst of jobs for one domain costs one query.
package resolver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/miekg/dns"
)

var (
	// ErrNotFound means the name does not exist (NXDOMAIN) or has no address.
	ErrNotFound = errors.New("no such host")
	// ErrTemporary means no usable answer now: SERVFAIL, REFUSED or timeout.
	ErrTemporary = errors.New("temporary DNS failure")
)

const (
	maxCacheEntries = 10000
	maxTTL          = time.Hour
	maxCNAMEHops    = 8
)

// Answer is the answer section of a reply.
type Answer struct {
	Rcode   int
	Records []dns.RR
}

// MX is one mail exchanger; Host has no trailing dot, except the null MX ".".
type MX struct {
	Host       string
	Preference uint16
}

// Resolver sends queries to Servers in order. The zero value is not usable;
// call New. Fields may be changed before the first lookup.
type Resolver struct {
	Servers   []string      // "host:port" of recursive resolvers
	HostsFile string        // consulted first by LookupNetIP; "" skips it
	Timeout   time.Duration // per query attempt
	Attempts  int           // rounds over Servers before giving up

	mu    sync.Mutex
	cache map[cacheKey]cacheEntry

	hostsMu      sync.Mutex
	hosts        map[string][]netip.Addr
	hostsChecked time.Time
	hostsMod     time.Time
}

type cacheKey struct {
	name  string
	qtype uint16
}

type cacheEntry struct {
	answer  *Answer // nil for a cached NXDOMAIN
	expires time.Time
}

// New returns a resolver that asks server ("host:port"), or the nameservers
// of /etc/resolv.conf when server is "".
func New(server string) *Resolver {
	r := &Resolver{
		HostsFile: "/etc/hosts",
		Timeout:   2 * time.Second,
		Attempts:  2,
		cache:     make(map[cacheKey]cacheEntry),
	}
	if server != "" {
		r.Servers = []string{server}
	} else if cc, err := dns.ClientConfigFromFile("/etc/resolv.conf"); err == nil && len(cc.Servers) > 0 {
		for _, s := range cc.Servers {
			r.Servers = append(r.Servers, net.JoinHostPort(s, cc.Port))
		}
	} else {
		r.Servers = []string{"127.0.0.1:53"}
	}
	return r
}

// Lookup asks for name's records of qtype. A name that does not exist
// returns an error wrapping ErrNotFound; a name without records of that type
// returns an empty Answer. Records include any CNAME chain the server sent.
func (r *Resolver) Lookup(ctx context.Context, name string, qtype uint16) (*Answer, error) {
	name = dns.Fqdn(strings.ToLower(strings.TrimSpace(name)))
	if _, ok := dns.IsDomainName(name); !ok || len(name) > 254 {
		return nil, fmt.Errorf("lookup %q: %w", name, ErrNotFound)
	}
	key := cacheKey{name, qtype}
	if e, ok := r.cached(key); ok {
		if e.answer == nil {
			return nil, fmt.Errorf("lookup %s: %w", strings.TrimSuffix(name, "."), ErrNotFound)
		}
		return &Answer{Rcode: e.answer.Rcode, Records: append([]dns.RR(nil), e.answer.Records...)}, nil
	}
	msg, err := r.exchange(ctx, name, qtype)
	if err != nil {
		return nil, fmt.Errorf("lookup %s %s: %w", strings.TrimSuffix(name, "."), dns.TypeToString[qtype], err)
	}
	switch msg.Rcode {
	case dns.RcodeSuccess:
		a := &Answer{Rcode: msg.Rcode, Records: msg.Answer}
		if len(msg.Answer) > 0 {
			r.store(key, a, minTTL(msg.Answer))
		} else {
			r.store(key, a, negativeTTL(msg))
		}
		return &Answer{Rcode: a.Rcode, Records: append([]dns.RR(nil), a.Records...)}, nil
	case dns.RcodeNameError:
		r.store(key, nil, negativeTTL(msg))
		return nil, fmt.Errorf("lookup %s: %w", strings.TrimSuffix(name, "."), ErrNotFound)
	case dns.RcodeServerFailure, dns.RcodeRefused:
		return nil, fmt.Errorf("lookup %s: %s: %w", strings.TrimSuffix(name, "."), dns.RcodeToString[msg.Rcode], ErrTemporary)
	default:
		return nil, fmt.Errorf("lookup %s: server answered %s", strings.TrimSuffix(name, "."), dns.RcodeToString[msg.Rcode])
	}
}

// exchange sends one question, over UDP and again over TCP when the reply is
// truncated, trying each server up to Attempts times.
func (r *Resolver) exchange(ctx context.Context, name string, qtype uint16) (*dns.Msg, error) {
	q := new(dns.Msg)
	q.SetQuestion(name, qtype)
	q.SetEdns0(1232, false)
	if len(r.Servers) == 0 {
		return nil, errors.New("resolver: no DNS servers configured")
	}
	attempts := max(r.Attempts, 1)
	var failed *dns.Msg // a SERVFAIL or REFUSED reply, kept in case no server does better
	var lastErr error
	for range attempts {
		for _, server := range r.Servers {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("%w: %w", ErrTemporary, err)
			}
			msg, err := r.ask(ctx, q, server, "udp")
			if err == nil && msg.Truncated {
				msg, err = r.ask(ctx, q, server, "tcp")
			}
			switch {
			case err != nil:
				lastErr = err
			case msg.Rcode == dns.RcodeServerFailure || msg.Rcode == dns.RcodeRefused:
				failed = msg
			default:
				return msg, nil
			}
		}
		if failed != nil {
			return failed, nil // the servers answered; asking again will not help
		}
	}
	return nil, fmt.Errorf("%w: %w", ErrTemporary, lastErr)
}

func (r *Resolver) ask(ctx context.Context, q *dns.Msg, server, network string) (*dns.Msg, error) {
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = 2 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c := &dns.Client{Net: network, Timeout: timeout}
	msg, _, err := c.ExchangeContext(ctx, q, server)
	if err == nil && msg.Id != q.Id {
		return nil, errors.New("reply id mismatch")
	}
	return msg, err
}

func (r *Resolver) cached(key cacheKey) (cacheEntry, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.cache[key]
	if !ok {
		return e, false
	}
	if time.Now().After(e.expires) {
		delete(r.cache, key)
		return e, false
	}
	return e, true
}

func (r *Resolver) store(key cacheKey, a *Answer, ttl time.Duration) {
	if ttl <= 0 {
		return
	}
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cache == nil {
		r.cache = make(map[cacheKey]cacheEntry)
	}
	if len(r.cache) >= maxCacheEntries {
		// Drop the expired entries, then arbitrary ones, to stay bounded.
		for k, e := range r.cache {
			if now.After(e.expires) || len(r.cache) >= maxCacheEntries {
				delete(r.cache, k)
			}
		}
	}
	r.cache[key] = cacheEntry{answer: a, expires: now.Add(min(ttl, maxTTL))}
}

func minTTL(rrs []dns.RR) time.Duration {
	ttl := rrs[0].Header().Ttl
	for _, rr := range rrs[1:] {
		ttl = min(ttl, rr.Header().Ttl)
	}
	return time.Duration(ttl) * time.Second
}

// negativeTTL is how long a "no such name" or "no data" answer may be
// cached: the smaller of the SOA's TTL and its minimum field (RFC 2308).
// Without an SOA it is not cached.
func negativeTTL(m *dns.Msg) time.Duration {
	for _, rr := range m.Ns {
		if soa, ok := rr.(*dns.SOA); ok {
			return time.Duration(min(soa.Hdr.Ttl, soa.Minttl)) * time.Second
		}
	}
	return 0
}

// follow returns the records of qtype owned by name or by the end of its
// CNAME chain within rrs.
func follow(rrs []dns.RR, name string, qtype uint16) []dns.RR {
	name = dns.Fqdn(strings.ToLower(name))
	for range maxCNAMEHops {
		next := ""
		for _, rr := range rrs {
			if c, ok := rr.(*dns.CNAME); ok && strings.EqualFold(c.Hdr.Name, name) {
				next = strings.ToLower(c.Target)
				break
			}
		}
		if next == "" || qtype == dns.TypeCNAME {
			break
		}
		name = next
	}
	var out []dns.RR
	for _, rr := range rrs {
		if rr.Header().Rrtype == qtype && strings.EqualFold(rr.Header().Name, name) {
			out = append(out, rr)
		}
	}
	return out
}

// LookupNetIP returns host's addresses, IPv4 first. network is "ip", "ip4"
// or "ip6". The hosts file is read first, as the system resolver does. With
// it *Resolver is a netguard.Resolver.
func (r *Resolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil
	}
	want4 := network == "ip" || network == "ip4"
	want6 := network == "ip" || network == "ip6"
	if !want4 && !want6 {
		return nil, fmt.Errorf("resolver: unknown network %q", network)
	}
	if addrs := r.fromHosts(host, want4, want6); len(addrs) > 0 {
		return addrs, nil
	}
	type result struct {
		addrs []netip.Addr
		err   error
	}
	query := func(qtype uint16) result {
		ans, err := r.Lookup(ctx, host, qtype)
		if err != nil {
			return result{err: err}
		}
		var out []netip.Addr
		for _, rr := range follow(ans.Records, host, qtype) {
			switch v := rr.(type) {
			case *dns.A:
				if a, ok := netip.AddrFromSlice(v.A.To4()); ok {
					out = append(out, a)
				}
			case *dns.AAAA:
				if a, ok := netip.AddrFromSlice(v.AAAA.To16()); ok {
					out = append(out, a)
				}
			}
		}
		return result{addrs: out}
	}
	var r4, r6 result
	switch {
	case want4 && want6:
		done := make(chan struct{})
		go func() { r6 = query(dns.TypeAAAA); close(done) }()
		r4 = query(dns.TypeA)
		<-done
	case want4:
		r4 = query(dns.TypeA)
	default:
		r6 = query(dns.TypeAAAA)
	}
	addrs := append(r4.addrs, r6.addrs...)
	if len(addrs) > 0 {
		return addrs, nil
	}
	// Prefer a temporary failure over "not found": only a clear answer
	// should make a caller conclude that the host does not exist.
	for _, err := range []error{r4.err, r6.err} {
		if errors.Is(err, ErrTemporary) {
			return nil, err
		}
	}
	for _, err := range []error{r4.err, r6.err} {
		if err != nil {
			return nil, err
		}
	}
	return nil, fmt.Errorf("lookup %s: no address: %w", host, ErrNotFound)
}

// LookupMX returns domain's mail exchangers sorted by preference. A domain
// without MX records returns none and no error.
func (r *Resolver) LookupMX(ctx context.Context, domain string) ([]MX, error) {
	ans, err := r.Lookup(ctx, domain, dns.TypeMX)
	if err != nil {
		return nil, err
	}
	var out []MX
	for _, rr := range follow(ans.Records, domain, dns.TypeMX) {
		mx := rr.(*dns.MX)
		host := strings.ToLower(mx.Mx)
		if host != "." {
			host = strings.TrimSuffix(host, ".")
		}
		out = append(out, MX{Host: host, Preference: mx.Preference})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Preference != out[j].Preference {
			return out[i].Preference < out[j].Preference
		}
		return out[i].Host < out[j].Host
	})
	return out, nil
}

// LookupTXT returns domain's TXT records, each record's strings joined.
func (r *Resolver) LookupTXT(ctx context.Context, domain string) ([]string, error) {
	ans, err := r.Lookup(ctx, domain, dns.TypeTXT)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, rr := range follow(ans.Records, domain, dns.TypeTXT) {
		out = append(out, strings.Join(rr.(*dns.TXT).Txt, ""))
	}
	return out, nil
}

// LookupNS returns domain's name servers without trailing dots.
func (r *Resolver) LookupNS(ctx context.Context, domain string) ([]string, error) {
	ans, err := r.Lookup(ctx, domain, dns.TypeNS)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, rr := range follow(ans.Records, domain, dns.TypeNS) {
		out = append(out, strings.TrimSuffix(strings.ToLower(rr.(*dns.NS).Ns), "."))
	}
	return out, nil
}

// LookupCNAME returns the target of name's CNAME record without the trailing
// dot, or "" when name is not an alias.
func (r *Resolver) LookupCNAME(ctx context.Context, name string) (string, error) {
	ans, err := r.Lookup(ctx, name, dns.TypeCNAME)
	if err != nil {
		return "", err
	}
	for _, rr := range follow(ans.Records, name, dns.TypeCNAME) {
		return strings.TrimSuffix(strings.ToLower(rr.(*dns.CNAME).Target), "."), nil
	}
	return "", nil
}
