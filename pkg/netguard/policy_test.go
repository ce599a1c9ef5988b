package netguard

import (
	"net/netip"
	"testing"
)

func TestParsePolicy(t *testing.T) {
	loop, public := netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("8.8.8.8")
	for _, c := range []struct {
		in      string
		private bool
	}{{"true", true}, {"1", true}, {"TRUE", true}, {"false", false}, {"0", false}} {
		p, err := ParsePolicy(c.in)
		if err != nil {
			t.Fatalf("%q: %v", c.in, err)
		}
		if p.Allows(loop) != c.private || !p.Allows(public) {
			t.Errorf("%q: allows loopback %v, public %v", c.in, p.Allows(loop), p.Allows(public))
		}
		if p.String() != map[bool]string{true: "true", false: "false"}[c.private] {
			t.Errorf("%q: String %q", c.in, p)
		}
	}
	if _, err := ParsePolicy("maybe"); err == nil {
		t.Error("maybe accepted")
	}
	var zero Policy
	if zero != PublicOnly || zero.Allows(loop) || !AllowPrivate.Allows(loop) {
		t.Error("the zero Policy is not PublicOnly")
	}
}
