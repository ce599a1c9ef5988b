package ratelimit

import (
	"net/netip"
	"testing"
	"time"
)

func TestClientBelievesOnlyTrustedProxies(t *testing.T) {
	trusted, err := ParseTrusted([]string{"10.0.0.0/8", "192.0.2.7"})
	if err != nil {
		t.Fatal(err)
	}
	l := New(1, trusted)
	a := netip.MustParseAddr
	cases := []struct {
		peer, xff, want string
	}{
		{"203.0.113.5", "198.51.100.1", "203.0.113.5"},         // untrusted peer: header ignored
		{"10.1.2.3", "198.51.100.1", "198.51.100.1"},           // trusted proxy
		{"10.1.2.3", "198.51.100.1, 10.9.9.9", "198.51.100.1"}, // chain of trusted proxies
		{"192.0.2.7", "1.2.3.4, 198.51.100.1", "198.51.100.1"}, // right-most untrusted wins, not a spoofed first
		{"10.1.2.3", "", "10.1.2.3"},                           // no header
		{"10.1.2.3", "garbage", "10.1.2.3"},                    // unparsable
		{"::ffff:10.1.2.3", "2001:db8::1", "2001:db8::1"},      // mapped peer
	}
	for _, c := range cases {
		if got := l.Client(a(c.peer), c.xff); got != a(c.want) {
			t.Errorf("Client(%s, %q) = %s, want %s", c.peer, c.xff, got, c.want)
		}
	}
	if _, err := ParseTrusted([]string{"10.0.0.0/8", "not-an-ip"}); err == nil {
		t.Error("bad TRUSTED_PROXIES entry accepted")
	}
}

func TestTokenBucketPerClient(t *testing.T) {
	l := New(2, nil) // 2/s, bursts of 4
	now := time.Unix(1_700_000_000, 0)
	one, two := netip.MustParseAddr("198.51.100.1"), netip.MustParseAddr("198.51.100.2")
	allowed := 0
	for range 10 {
		if l.Allow(one, now) {
			allowed++
		}
	}
	if allowed != 4 {
		t.Fatalf("burst allowed %d, want 4", allowed)
	}
	if !l.Allow(two, now) {
		t.Fatal("one client's bucket limited another")
	}
	if !l.Allow(one, now.Add(600*time.Millisecond)) {
		t.Fatal("bucket did not refill")
	}
}
