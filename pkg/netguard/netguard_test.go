package netguard

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestIsPublic(t *testing.T) {
	cases := []struct {
		addr string
		want bool
	}{
		// public IPv4 and IPv6
		{"8.8.8.8", true},
		{"1.1.1.1", true},
		{"93.184.215.14", true},
		{"100.63.255.255", true},
		{"100.128.0.0", true},
		{"172.15.255.255", true},
		{"172.32.0.0", true},
		{"198.17.255.255", true},
		{"198.20.0.0", true},
		{"223.255.255.255", true},
		{"2606:4700:4700::1111", true},
		{"2a00:1450:4001:80b::200e", true},
		{"::ffff:8.8.8.8", true},
		// refused IPv4
		{"0.0.0.0", false},
		{"0.1.2.3", false},
		{"10.0.0.1", false},
		{"100.64.0.1", false},
		{"100.127.255.255", false},
		{"127.0.0.1", false},
		{"127.255.255.254", false},
		{"169.254.1.1", false},
		{"169.254.169.254", false},
		{"172.16.0.1", false},
		{"172.31.255.255", false},
		{"192.0.0.8", false},
		{"192.0.2.1", false},
		{"192.88.99.1", false},
		{"192.168.1.1", false},
		{"198.18.0.1", false},
		{"198.19.255.255", false},
		{"198.51.100.7", false},
		{"203.0.113.9", false},
		{"224.0.0.1", false},
		{"239.255.255.250", false},
		{"240.0.0.1", false},
		{"255.255.255.255", false},
		// refused IPv6
		{"::", false},
		{"::1", false},
		{"::ffff:127.0.0.1", false},
		{"::ffff:10.1.2.3", false},
		{"::ffff:169.254.169.254", false},
		{"::127.0.0.1", false},
		{"64:ff9b::7f00:1", false},
		{"64:ff9b:1::1", false},
		{"100::1", false},
		{"2001::1", false},
		{"2001:2::1", false},
		{"2001:db8::1", false},
		{"2002:7f00:1::1", false},
		{"3fff::1", false},
		{"5f00::1", false},
		{"fc00::1", false},
		{"fd00:ec2::254", false},
		{"fe80::1", false},
		{"fe80::1%eth0", false},
		{"fec0::1", false},
		{"ff02::1", false},
	}
	for _, c := range cases {
		if got := IsPublic(netip.MustParseAddr(c.addr)); got != c.want {
			t.Errorf("IsPublic(%s) = %v, want %v", c.addr, got, c.want)
		}
	}
	if IsPublic(netip.Addr{}) {
		t.Error("the zero Addr must not be public")
	}
}

// mapResolver answers from a fixed table and counts its lookups.
type mapResolver struct {
	hosts map[string][]netip.Addr
	calls atomic.Int32
}

func (m *mapResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	m.calls.Add(1)
	if a, ok := m.hosts[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// rebinder answers first with one address and with another ever after, as
// an attacker's DNS server with a zero TTL would.
type rebinder struct {
	mu    sync.Mutex
	first netip.Addr
	then  netip.Addr
	calls int
}

func (r *rebinder) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	if r.calls == 1 {
		return []netip.Addr{r.first}, nil
	}
	return []netip.Addr{r.then}, nil
}

// countingListener accepts connections on 127.0.0.1:0 and counts them.
func countingListener(t *testing.T) (port string, accepted *atomic.Int32) {
	t.Helper()
	return countingListenerOn(t, "127.0.0.1")
}

// countingListenerOn listens on ip, a loopback address (Linux answers on
// all of 127.0.0.0/8), and counts the connections it accepts.
func countingListenerOn(t *testing.T, ip string) (port string, accepted *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	accepted = new(atomic.Int32)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	_, port, _ = net.SplitHostPort(ln.Addr().String())
	return port, accepted
}

func TestDialerRefusesLoopbackName(t *testing.T) {
	port, accepted := countingListener(t)
	res := &mapResolver{hosts: map[string][]netip.Addr{"local.test": {netip.MustParseAddr("127.0.0.1")}}}
	d := &Dialer{Resolver: res, Timeout: time.Second}
	_, err := d.DialContext(context.Background(), "tcp", net.JoinHostPort("local.test", port))
	var re *RefusedError
	if !errors.As(err, &re) {
		t.Fatalf("want *RefusedError, got %v", err)
	}
	if re.Host != "local.test" || re.Addr != netip.MustParseAddr("127.0.0.1") {
		t.Errorf("refusal names %s (%s)", re.Host, re.Addr)
	}
	if want := "refused target local.test (127.0.0.1): not a public address"; err.Error() != want {
		t.Errorf("message %q, want %q", err.Error(), want)
	}
	// An IP literal is checked without any lookup.
	if _, err := d.DialContext(context.Background(), "tcp", net.JoinHostPort("::ffff:127.0.0.1", port)); !errors.As(err, &re) {
		t.Fatalf("mapped loopback literal: want *RefusedError, got %v", err)
	}
	if res.calls.Load() != 1 {
		t.Errorf("resolver called %d times, want 1", res.calls.Load())
	}
	time.Sleep(20 * time.Millisecond)
	if n := accepted.Load(); n != 0 {
		t.Errorf("listener accepted %d connections, want 0", n)
	}
}

func TestDialerAllowPrivate(t *testing.T) {
	port, accepted := countingListener(t)
	res := &mapResolver{hosts: map[string][]netip.Addr{"local.test": {
		netip.MustParseAddr("::ffff:127.0.0.1"),
	}}}
	d := &Dialer{Resolver: res, Policy: AllowPrivate, Timeout: time.Second}
	c, err := d.DialContext(context.Background(), "tcp", net.JoinHostPort("local.test", port))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got := c.RemoteAddr().(*net.TCPAddr).AddrPort().Addr().Unmap(); got != netip.MustParseAddr("127.0.0.1") {
		t.Errorf("connected to %s", got)
	}
	deadline := time.Now().Add(2 * time.Second)
	for accepted.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if accepted.Load() != 1 {
		t.Errorf("listener accepted %d connections, want 1", accepted.Load())
	}
}

func TestDialerAllowsListedRange(t *testing.T) {
	p, err := ParsePolicy("127.0.0.2/32")
	if err != nil {
		t.Fatal(err)
	}
	port1, accepted1 := countingListenerOn(t, "127.0.0.1")
	port2, accepted2 := countingListenerOn(t, "127.0.0.2")
	res := &mapResolver{hosts: map[string][]netip.Addr{
		"one.test": {netip.MustParseAddr("127.0.0.1")},
		"two.test": {netip.MustParseAddr("::ffff:127.0.0.2")},
	}}
	d := &Dialer{Resolver: res, Policy: p, Timeout: time.Second}
	var re *RefusedError
	for _, host := range []string{"one.test", "127.0.0.1"} {
		if _, err := d.DialContext(context.Background(), "tcp", net.JoinHostPort(host, port1)); !errors.As(err, &re) {
			t.Errorf("%s: want *RefusedError, got %v", host, err)
		}
	}
	for _, host := range []string{"two.test", "127.0.0.2"} {
		c, err := d.DialContext(context.Background(), "tcp", net.JoinHostPort(host, port2))
		if err != nil {
			t.Fatalf("%s: %v", host, err)
		}
		c.Close()
	}
	deadline := time.Now().Add(2 * time.Second)
	for accepted2.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if accepted1.Load() != 0 || accepted2.Load() != 2 {
		t.Errorf("127.0.0.1 accepted %d connections (want 0), 127.0.0.2 accepted %d (want 2)", accepted1.Load(), accepted2.Load())
	}
}

func TestDialerTriesNextAddress(t *testing.T) {
	port, _ := countingListener(t)
	// 127.0.0.2 has no listener on this port; the dialer moves on to 127.0.0.1.
	res := &mapResolver{hosts: map[string][]netip.Addr{"two.test": {
		netip.MustParseAddr("127.0.0.2"), netip.MustParseAddr("127.0.0.1"),
	}}}
	d := &Dialer{Resolver: res, Policy: AllowPrivate, Timeout: time.Second}
	c, err := d.DialContext(context.Background(), "tcp", net.JoinHostPort("two.test", port))
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
}

func TestDialerRebinding(t *testing.T) {
	port, accepted := countingListener(t)
	// The first answer is the one checked; the loopback answer that follows
	// must never be used.
	r := &rebinder{first: netip.MustParseAddr("203.0.113.10"), then: netip.MustParseAddr("127.0.0.1")}
	d := &Dialer{Resolver: r, Timeout: time.Second}
	for i := 0; i < 3; i++ {
		_, err := d.DialContext(context.Background(), "tcp", net.JoinHostPort("rebind.test", port))
		var re *RefusedError
		if !errors.As(err, &re) {
			t.Fatalf("dial %d: want *RefusedError, got %v", i, err)
		}
		if i == 0 && re.Addr != r.first {
			t.Errorf("first refusal names %s, want the checked %s", re.Addr, r.first)
		}
	}
	if r.calls != 3 {
		t.Errorf("resolver called %d times for 3 dials, want one lookup per dial", r.calls)
	}
	time.Sleep(20 * time.Millisecond)
	if n := accepted.Load(); n != 0 {
		t.Errorf("loopback listener accepted %d connections, want 0", n)
	}

	// With private targets allowed, the dial goes to the first answer
	// (127.0.0.1, where the listener is), not to a second lookup's 127.0.0.2.
	r2 := &rebinder{first: netip.MustParseAddr("127.0.0.1"), then: netip.MustParseAddr("127.0.0.2")}
	d2 := &Dialer{Resolver: r2, Policy: AllowPrivate, Timeout: time.Second}
	c, err := d2.DialContext(context.Background(), "tcp", net.JoinHostPort("rebind.test", port))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got := c.RemoteAddr().(*net.TCPAddr).AddrPort().Addr(); got != r2.first {
		t.Errorf("connected to %s, want %s", got, r2.first)
	}
	if r2.calls != 1 {
		t.Errorf("resolver called %d times, want 1", r2.calls)
	}
}

func TestDialerLookupError(t *testing.T) {
	d := &Dialer{Resolver: &mapResolver{}, Timeout: time.Second}
	_, err := d.DialContext(context.Background(), "tcp", "missing.test:80")
	var de *net.DNSError
	if !errors.As(err, &de) || !de.IsNotFound {
		t.Fatalf("want not-found DNS error, got %v", err)
	}
	if _, err := d.DialContext(context.Background(), "unix", "x:1"); err == nil {
		t.Fatal("unix network accepted")
	}
}
