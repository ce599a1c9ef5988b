package netguard

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Policy says which addresses Surveyor may connect to on a user's behalf:
// public unicast addresses always, others only when the deployment allows
// them (ALLOW_PRIVATE_TARGETS): all of them, or those in a list of ranges,
// so one internal network can be scanned while the rest stays refused.
// The zero value is PublicOnly. Ingest's check of IP literals and every
// Dialer take the same Policy, so the rule has one home.
//
// Policies compare with == only as PublicOnly and AllowPrivate; two lists
// parsed apart are different values even when they hold the same ranges
// (compare their String).
type Policy struct {
	private bool            // every non-public address is allowed
	ranges  *[]netip.Prefix // else these non-public ranges are; never changed once parsed
}

var (
	// PublicOnly refuses every non-public address: the default.
	PublicOnly = Policy{}
	// AllowPrivate also allows loopback, private, link-local and other
	// non-public addresses: tests and private deployments.
	AllowPrivate = Policy{private: true}
)

// ParsePolicy reads ALLOW_PRIVATE_TARGETS: a boolean in the forms
// strconv.ParseBool accepts, or a comma-separated list of IPv4 and IPv6
// ranges in CIDR notation, where a bare address is a range of one.
// IPv4-mapped IPv6 ranges are read as the IPv4 ranges they map.
func ParsePolicy(s string) (Policy, error) {
	if b, err := strconv.ParseBool(s); err == nil {
		return Policy{private: b}, nil
	}
	var ranges []netip.Prefix
	for _, entry := range strings.Split(s, ",") {
		p, err := parseRange(strings.TrimSpace(entry))
		if err != nil {
			return Policy{}, fmt.Errorf("entry %q: %v (use true, false or comma-separated CIDRs such as 10.20.0.0/16)", strings.TrimSpace(entry), err)
		}
		ranges = append(ranges, p)
	}
	return Policy{ranges: &ranges}, nil
}

// parseRange reads one entry of the list in its canonical form: host bits
// cleared, IPv4-mapped ranges as IPv4.
func parseRange(s string) (netip.Prefix, error) {
	if s == "" {
		return netip.Prefix{}, fmt.Errorf("empty")
	}
	var p netip.Prefix
	if strings.Contains(s, "/") {
		var err error
		if p, err = netip.ParsePrefix(s); err != nil {
			return netip.Prefix{}, fmt.Errorf("not a CIDR range")
		}
	} else {
		a, err := netip.ParseAddr(s)
		if err != nil || a.Zone() != "" {
			return netip.Prefix{}, fmt.Errorf("not an IP address or CIDR range")
		}
		p = netip.PrefixFrom(a, a.BitLen())
	}
	if a := p.Addr(); a.Is4In6() {
		if p.Bits() < 96 {
			return netip.Prefix{}, fmt.Errorf("reaches beyond the IPv4-mapped range ::ffff:0:0/96")
		}
		p = netip.PrefixFrom(a.Unmap(), p.Bits()-96)
	}
	return p.Masked(), nil
}

// Allows reports whether a may be connected to.
func (p Policy) Allows(a netip.Addr) bool {
	if p.private || IsPublic(a) {
		return true
	}
	if p.ranges == nil {
		return false
	}
	a = a.Unmap().WithZone("")
	for _, r := range *p.ranges {
		if r.Contains(a) {
			return true
		}
	}
	return false
}

// String is the policy as ALLOW_PRIVATE_TARGETS would say it.
func (p Policy) String() string {
	if p.ranges == nil {
		return strconv.FormatBool(p.private)
	}
	out := make([]string, len(*p.ranges))
	for i, r := range *p.ranges {
		out[i] = r.String()
	}
	return strings.Join(out, ",")
}
