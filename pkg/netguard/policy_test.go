package netguard

import (
	"net/netip"
	"strconv"
	"strings"
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

func TestParsePolicyList(t *testing.T) {
	p, err := ParsePolicy(" 127.0.0.2/32, 10.20.0.0/16,fd00:1::/32 ,::ffff:192.168.7.0/120,169.254.0.9,fe80::1")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.String(), "127.0.0.2/32,10.20.0.0/16,fd00:1::/32,192.168.7.0/24,169.254.0.9/32,fe80::1/128"; got != want {
		t.Errorf("String %q, want %q", got, want)
	}
	for addr, want := range map[string]bool{
		"127.0.0.2":            true,
		"127.0.0.1":            false,
		"::ffff:127.0.0.2":     true, // mapped addresses are matched as IPv4
		"::ffff:127.0.0.1":     false,
		"10.20.255.1":          true,
		"10.21.0.1":            false,
		"10.0.0.1":             false,
		"192.168.7.200":        true, // the mapped range was read as IPv4
		"192.168.8.1":          false,
		"169.254.0.9":          true, // a bare address is a range of one
		"169.254.169.254":      false,
		"fd00:1:ffff::1":       true,
		"fd00:2::1":            false,
		"fe80::1":              true,
		"fe80::2":              false,
		"::1":                  false,
		"8.8.8.8":              true, // public stays allowed
		"2606:4700:4700::1111": true,
	} {
		if got := p.Allows(netip.MustParseAddr(addr)); got != want {
			t.Errorf("Allows(%s) = %v, want %v", addr, got, want)
		}
	}
	// Host bits are cleared, as the range they name is what is meant.
	if p, err := ParsePolicy("10.20.1.5/16"); err != nil || p.String() != "10.20.0.0/16" {
		t.Errorf("10.20.1.5/16: %v %v", p, err)
	}
}

func TestParsePolicyBadEntry(t *testing.T) {
	for in, entry := range map[string]string{
		"maybe":                      "maybe",
		"127.0.0.2/32,10.300.0.0/16": "10.300.0.0/16",
		"10.0.0.0/33":                "10.0.0.0/33",
		"10.0.0.0/8,":                "",
		"10.0.0.0/8,,fd00::/8":       "",
		"fe80::1%eth0":               "fe80::1%eth0",
		"fe80::/64%eth0":             "fe80::/64%eth0",
		"::ffff:0:0/95":              "::ffff:0:0/95",
		"10.0.0.0/8 192.168.0.0/16":  "10.0.0.0/8 192.168.0.0/16",
		"true,10.0.0.0/8":            "true",
		"example.internal":           "example.internal",
	} {
		_, err := ParsePolicy(in)
		if err == nil {
			t.Errorf("%q accepted", in)
			continue
		}
		if !strings.Contains(err.Error(), strconv.Quote(entry)) {
			t.Errorf("%q: error %q does not name the entry %q", in, err, entry)
		}
	}
}
