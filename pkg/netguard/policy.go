package netguard

import (
	"fmt"
	"net/netip"
	"strconv"
)

// Policy says which addresses Surveyor may connect to on a user's behalf:
// public unicast addresses always, others only when the deployment allows
// them (ALLOW_PRIVATE_TARGETS). The zero value is PublicOnly. Ingest's
// check of IP literals and every Dialer take the same Policy, so the rule
// has one home; a list of allowed prefixes would be added here.
type Policy struct {
	private bool // every non-public address is allowed
}

var (
	// PublicOnly refuses every non-public address: the default.
	PublicOnly = Policy{}
	// AllowPrivate also allows loopback, private, link-local and other
	// non-public addresses: tests and private deployments.
	AllowPrivate = Policy{private: true}
)

// ParsePolicy reads ALLOW_PRIVATE_TARGETS: a boolean in the forms
// strconv.ParseBool accepts.
func ParsePolicy(s string) (Policy, error) {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return Policy{}, fmt.Errorf("%q is not a boolean (use true or false)", s)
	}
	return Policy{private: b}, nil
}

// Allows reports whether a may be connected to.
func (p Policy) Allows(a netip.Addr) bool { return p.private || IsPublic(a) }

// String is the policy as ALLOW_PRIVATE_TARGETS would say it.
func (p Policy) String() string { return strconv.FormatBool(p.private) }
