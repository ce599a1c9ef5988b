// Package ratelimit is ingest's optional per-client token bucket. The client
// is the connection's address, or the address a trusted proxy names in
// X-Forwarded-For: a header from anyone else is not believed.
package ratelimit

import (
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Limiter hands out one token bucket per client IP.
type Limiter struct {
	rate    rate.Limit
	burst   int
	trusted []netip.Prefix

	mu      sync.Mutex
	clients map[netip.Addr]*client
	swept   time.Time
}

type client struct {
	bucket *rate.Limiter
	seen   time.Time
}

// New allows perSecond requests per client with bursts of twice that.
// trusted lists the proxies whose X-Forwarded-For is believed.
func New(perSecond float64, trusted []netip.Prefix) *Limiter {
	return &Limiter{rate: rate.Limit(perSecond), burst: max(1, int(2*perSecond)), trusted: trusted,
		clients: map[netip.Addr]*client{}}
}

// ParseTrusted reads TRUSTED_PROXIES: addresses or CIDR prefixes.
func ParseTrusted(items []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, t := range items {
		p, err := netip.ParsePrefix(t)
		if err != nil {
			a, aerr := netip.ParseAddr(t)
			if aerr != nil {
				return nil, fmt.Errorf("%q is not an IP address or CIDR prefix", t)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// Client finds the address a request is charged to: the peer, or, when
// the peer is a trusted proxy, the right-most X-Forwarded-For entry that
// is not itself a trusted proxy.
func (l *Limiter) Client(peer netip.Addr, forwardedFor string) netip.Addr {
	peer = peer.Unmap()
	if !l.isTrusted(peer) || forwardedFor == "" {
		return peer
	}
	hops := strings.Split(forwardedFor, ",")
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			return peer
		}
		a = a.Unmap()
		if !l.isTrusted(a) {
			return a
		}
	}
	return peer
}

func (l *Limiter) isTrusted(a netip.Addr) bool {
	for _, p := range l.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// Allow takes a token for addr, reporting false when its bucket is empty.
func (l *Limiter) Allow(addr netip.Addr, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.swept) > time.Minute {
		for a, c := range l.clients {
			if now.Sub(c.seen) > time.Minute {
				delete(l.clients, a)
			}
		}
		l.swept = now
	}
	c := l.clients[addr]
	if c == nil {
		c = &client{bucket: rate.NewLimiter(l.rate, l.burst)}
		l.clients[addr] = c
	}
	c.seen = now
	return c.bucket.AllowN(now, 1)
}
