// Package netguard keeps Surveyor's outbound connections to user-supplied
// targets on the public internet. A caller hands us a URL or a mail domain;
// without this check it could point the workers at loopback services, the
// private network or a cloud metadata endpoint (SSRF).
package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"
)

// refused4 lists the IPv4 ranges that are not reachable public unicast.
var refused4 = prefixes(
	"0.0.0.0/8",       // "this network", unspecified
	"10.0.0.0/8",      // private
	"100.64.0.0/10",   // carrier-grade NAT
	"127.0.0.0/8",     // loopback
	"169.254.0.0/16",  // link-local, includes cloud metadata 169.254.169.254
	"172.16.0.0/12",   // private
	"192.0.0.0/24",    // IETF protocol assignments
	"192.0.2.0/24",    // documentation TEST-NET-1
	"192.88.99.0/24",  // deprecated 6to4 relay anycast
	"192.168.0.0/16",  // private
	"198.18.0.0/15",   // benchmarking
	"198.51.100.0/24", // documentation TEST-NET-2
	"203.0.113.0/24",  // documentation TEST-NET-3
	"224.0.0.0/4",     // multicast
	"240.0.0.0/4",     // reserved, includes broadcast 255.255.255.255
)

// global6 is the only IPv6 block handed out as global unicast; everything
// outside it (loopback, unspecified, ULA fc00::/7 with the EC2 metadata
// address fd00:ec2::254, link-local, multicast, NAT64 64:ff9b::/96,
// discard 100::/64, SRv6 5f00::/16, ...) is refused.
var global6 = netip.MustParsePrefix("2000::/3")

// refused6 lists the special-purpose blocks inside 2000::/3.
var refused6 = prefixes(
	"2001::/23",     // IETF protocol assignments: Teredo, benchmarking, ORCHID
	"2001:db8::/32", // documentation
	"2002::/16",     // 6to4, which can wrap any IPv4 address
	"3fff::/20",     // documentation (RFC 9637)
)

func prefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

// IsPublic reports whether a is a public unicast address that Surveyor may
// connect to. IPv4-mapped IPv6 addresses are judged as the IPv4 address.
func IsPublic(a netip.Addr) bool {
	if !a.IsValid() {
		return false
	}
	a = a.Unmap().WithZone("")
	if a.Is4() {
		for _, p := range refused4 {
			if p.Contains(a) {
				return false
			}
		}
		return true
	}
	if !global6.Contains(a) {
		return false
	}
	for _, p := range refused6 {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

// RefusedError reports a target whose address is not public.
type RefusedError struct {
	Host string
	Addr netip.Addr
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("refused target %s (%s): not a public address", e.Host, e.Addr)
}

// Resolver turns a host name into addresses. *net.Resolver and
// *resolver.Resolver satisfy it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Dialer connects only to the addresses its Policy allows. It resolves the
// host once and dials the very address it checked, so a DNS answer that
// changes between check and connect (rebinding) cannot slip a private
// address through.
type Dialer struct {
	Resolver Resolver      // nil means net.DefaultResolver
	Policy   Policy        // the zero value allows public addresses only
	Timeout  time.Duration // per connection attempt; 0 means 10s
}

// DialContext has the signature of net.Dialer.DialContext so it plugs into
// http.Transport and SMTP clients. A refused target returns *RefusedError.
func (d *Dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	ipNet := "ip"
	switch network {
	case "tcp", "udp":
	case "tcp4", "udp4":
		ipNet = "ip4"
	case "tcp6", "udp6":
		ipNet = "ip6"
	default:
		return nil, fmt.Errorf("netguard: unsupported network %q", network)
	}
	addrs, err := d.resolve(ctx, ipNet, host)
	if err != nil {
		return nil, err
	}
	var allowed []netip.Addr
	var refused *RefusedError
	for _, a := range addrs {
		if d.Policy.Allows(a) {
			allowed = append(allowed, a.Unmap())
		} else if refused == nil {
			refused = &RefusedError{Host: host, Addr: a}
		}
	}
	if len(allowed) == 0 {
		if refused != nil {
			return nil, refused
		}
		return nil, &net.DNSError{Err: "no address", Name: host, IsNotFound: true}
	}
	timeout := d.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	nd := net.Dialer{Timeout: timeout}
	var errs []error
	for _, a := range allowed {
		c, err := nd.DialContext(ctx, network, net.JoinHostPort(a.String(), port))
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, errors.Join(errs...)
}

// resolve returns the addresses of host; an IP literal is its own answer.
func (d *Dialer) resolve(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil
	}
	r := d.Resolver
	if r == nil {
		r = net.DefaultResolver
	}
	return r.LookupNetIP(ctx, network, host)
}
