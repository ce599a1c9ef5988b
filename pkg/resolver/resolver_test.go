package resolver

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// zone is a tiny authoritative-looking DNS server on 127.0.0.1:0 that counts
// the questions it receives.
type zone struct {
	mu      sync.Mutex
	records map[string][]string // "name. TYPE" -> RR text
	queries map[string]int
}

func (z *zone) count(name string, qtype uint16) int {
	z.mu.Lock()
	defer z.mu.Unlock()
	return z.queries[name+" "+dns.TypeToString[qtype]]
}

func (z *zone) ServeDNS(w dns.ResponseWriter, req *dns.Msg) {
	q := req.Question[0]
	key := q.Name + " " + dns.TypeToString[q.Qtype]
	z.mu.Lock()
	z.queries[key]++
	z.mu.Unlock()
	m := new(dns.Msg)
	m.SetReply(req)
	soa, _ := dns.NewRR("test. 300 IN SOA ns.test. admin.test. 1 7200 900 1209600 2")
	switch q.Name {
	case "servfail.test.":
		m.Rcode = dns.RcodeServerFailure
	case "refused.test.":
		m.Rcode = dns.RcodeRefused
	case "silent.test.":
		return // never answers: the client must time out
	case "missing.test.":
		m.Rcode = dns.RcodeNameError
		m.Ns = append(m.Ns, soa)
	default:
		for _, s := range z.records[key] {
			rr, err := dns.NewRR(s)
			if err != nil {
				panic(err)
			}
			m.Answer = append(m.Answer, rr)
		}
		// An alias's chain is answered for any type, as a recursive server does.
		if q.Qtype != dns.TypeCNAME {
			for _, s := range z.records[q.Name+" CNAME"] {
				rr, _ := dns.NewRR(s)
				m.Answer = append(m.Answer, rr)
				target := rr.(*dns.CNAME).Target
				for _, s := range z.records[target+" "+dns.TypeToString[q.Qtype]] {
					rr, _ := dns.NewRR(s)
					m.Answer = append(m.Answer, rr)
				}
			}
		}
		if len(m.Answer) == 0 {
			m.Ns = append(m.Ns, soa)
		}
	}
	w.WriteMsg(m)
}

func startZone(t *testing.T) (*zone, string) {
	t.Helper()
	z := &zone{queries: map[string]int{}, records: map[string][]string{
		"www.example.test. A":       {"www.example.test. 60 IN A 192.0.2.10", "www.example.test. 60 IN A 192.0.2.11"},
		"www.example.test. AAAA":    {"www.example.test. 60 IN AAAA 2001:db8::10"},
		"example.test. MX":          {"example.test. 300 IN MX 20 mx2.example.test.", "example.test. 300 IN MX 10 MX1.example.test."},
		"example.test. TXT":         {`example.test. 300 IN TXT "v=spf1 " "-all"`, `example.test. 300 IN TXT "hello"`},
		"example.test. NS":          {"example.test. 300 IN NS ns1.example.test.", "example.test. 300 IN NS ns2.example.test."},
		"alias.example.test. CNAME": {"alias.example.test. 60 IN CNAME www.example.test."},
		"nullmx.test. MX":           {"nullmx.test. 300 IN MX 0 ."},
		"short.test. A":             {"short.test. 1 IN A 192.0.2.50"},
		"v4only.test. A":            {"v4only.test. 60 IN A 192.0.2.60"},
	}}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &dns.Server{PacketConn: pc, Handler: z}
	started := make(chan struct{})
	srv.NotifyStartedFunc = func() { close(started) }
	go srv.ActivateAndServe()
	<-started
	t.Cleanup(func() { srv.Shutdown() })
	return z, pc.LocalAddr().String()
}

func newTest(t *testing.T) (*zone, *Resolver) {
	z, addr := startZone(t)
	r := New(addr)
	r.HostsFile = ""
	r.Timeout = 200 * time.Millisecond
	r.Attempts = 1
	return z, r
}

func TestRecordTypes(t *testing.T) {
	_, r := newTest(t)
	ctx := context.Background()

	addrs, err := r.LookupNetIP(ctx, "ip", "www.example.test")
	if err != nil {
		t.Fatal(err)
	}
	want := []netip.Addr{netip.MustParseAddr("192.0.2.10"), netip.MustParseAddr("192.0.2.11"), netip.MustParseAddr("2001:db8::10")}
	if !slices.Equal(addrs, want) {
		t.Errorf("ip: %v, want %v", addrs, want)
	}
	if addrs, _ := r.LookupNetIP(ctx, "ip6", "www.example.test"); !slices.Equal(addrs, want[2:]) {
		t.Errorf("ip6: %v", addrs)
	}
	if addrs, _ := r.LookupNetIP(ctx, "ip", "alias.example.test"); !slices.Equal(addrs, want) {
		t.Errorf("alias followed to %v", addrs)
	}
	if addrs, err := r.LookupNetIP(ctx, "ip", "v4only.test"); err != nil || len(addrs) != 1 {
		t.Errorf("v4only: %v %v", addrs, err)
	}

	mx, err := r.LookupMX(ctx, "example.test")
	if err != nil {
		t.Fatal(err)
	}
	if want := []MX{{"mx1.example.test", 10}, {"mx2.example.test", 20}}; !slices.Equal(mx, want) {
		t.Errorf("mx: %v, want %v", mx, want)
	}
	if mx, _ := r.LookupMX(ctx, "nullmx.test"); !slices.Equal(mx, []MX{{".", 0}}) {
		t.Errorf("null mx: %v", mx)
	}
	if mx, err := r.LookupMX(ctx, "www.example.test"); err != nil || len(mx) != 0 {
		t.Errorf("no-MX domain: %v %v", mx, err)
	}

	txt, err := r.LookupTXT(ctx, "example.test")
	if err != nil || !slices.Equal(txt, []string{"v=spf1 -all", "hello"}) {
		t.Errorf("txt: %q %v", txt, err)
	}
	ns, err := r.LookupNS(ctx, "example.test")
	if err != nil || !slices.Equal(ns, []string{"ns1.example.test", "ns2.example.test"}) {
		t.Errorf("ns: %q %v", ns, err)
	}
	cname, err := r.LookupCNAME(ctx, "alias.example.test")
	if err != nil || cname != "www.example.test" {
		t.Errorf("cname: %q %v", cname, err)
	}
	if cname, err := r.LookupCNAME(ctx, "www.example.test"); err != nil || cname != "" {
		t.Errorf("non-alias cname: %q %v", cname, err)
	}

	ans, err := r.Lookup(ctx, "WWW.Example.Test.", dns.TypeA)
	if err != nil || ans.Rcode != dns.RcodeSuccess || len(ans.Records) != 2 {
		t.Errorf("raw lookup: %+v %v", ans, err)
	}
}

func TestFailuresDistinguished(t *testing.T) {
	_, r := newTest(t)
	ctx := context.Background()
	_, err := r.Lookup(ctx, "missing.test", dns.TypeA)
	if !errors.Is(err, ErrNotFound) || errors.Is(err, ErrTemporary) {
		t.Errorf("NXDOMAIN: %v", err)
	}
	for _, name := range []string{"servfail.test", "refused.test", "silent.test"} {
		_, err := r.Lookup(ctx, name, dns.TypeA)
		if !errors.Is(err, ErrTemporary) || errors.Is(err, ErrNotFound) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := r.LookupNetIP(ctx, "ip", "missing.test"); !errors.Is(err, ErrNotFound) {
		t.Errorf("LookupNetIP NXDOMAIN: %v", err)
	}
	if _, err := r.LookupNetIP(ctx, "ip", "servfail.test"); !errors.Is(err, ErrTemporary) {
		t.Errorf("LookupNetIP SERVFAIL: %v", err)
	}
	if _, err := r.LookupMX(ctx, "missing.test"); !errors.Is(err, ErrNotFound) {
		t.Errorf("LookupMX NXDOMAIN: %v", err)
	}
	// A server that is not listening at all is a temporary failure.
	pc, _ := net.ListenPacket("udp", "127.0.0.1:0")
	dead := pc.LocalAddr().String()
	pc.Close()
	r2 := New(dead)
	r2.HostsFile, r2.Timeout, r2.Attempts = "", 200*time.Millisecond, 1
	if _, err := r2.Lookup(ctx, "www.example.test", dns.TypeA); !errors.Is(err, ErrTemporary) {
		t.Errorf("dead server: %v", err)
	}
}

func TestCacheHonoursTTL(t *testing.T) {
	z, r := newTest(t)
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		if _, err := r.Lookup(ctx, "www.example.test", dns.TypeA); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Lookup(ctx, "missing.test", dns.TypeA); !errors.Is(err, ErrNotFound) {
			t.Fatal(err)
		}
		r.Lookup(ctx, "servfail.test", dns.TypeA)
	}
	if n := z.count("www.example.test.", dns.TypeA); n != 1 {
		t.Errorf("positive answer asked %d times, want 1", n)
	}
	if n := z.count("missing.test.", dns.TypeA); n != 1 {
		t.Errorf("negative answer asked %d times, want 1 (SOA minimum 2s)", n)
	}
	if n := z.count("servfail.test.", dns.TypeA); n != 3 {
		t.Errorf("SERVFAIL asked %d times, want 3 (never cached)", n)
	}

	// A 1-second TTL expires.
	r.Lookup(ctx, "short.test", dns.TypeA)
	r.Lookup(ctx, "short.test", dns.TypeA)
	if n := z.count("short.test.", dns.TypeA); n != 1 {
		t.Fatalf("short TTL asked %d times before expiry, want 1", n)
	}
	time.Sleep(1100 * time.Millisecond)
	r.Lookup(ctx, "short.test", dns.TypeA)
	if n := z.count("short.test.", dns.TypeA); n != 2 {
		t.Errorf("short TTL asked %d times after expiry, want 2", n)
	}
}

func TestHostsFileFirst(t *testing.T) {
	z, r := newTest(t)
	path := filepath.Join(t.TempDir(), "hosts")
	os.WriteFile(path, []byte("# test hosts\n127.0.0.1 localhost\n10.9.8.7 www.example.test Intranet # comment\n::1 localhost ip6-localhost\nbogus line\n"), 0o644)
	r.HostsFile = path
	ctx := context.Background()

	addrs, err := r.LookupNetIP(ctx, "ip", "www.example.test")
	if err != nil || !slices.Equal(addrs, []netip.Addr{netip.MustParseAddr("10.9.8.7")}) {
		t.Errorf("hosts entry: %v %v", addrs, err)
	}
	if n := z.count("www.example.test.", dns.TypeA); n != 0 {
		t.Errorf("DNS asked %d times for a hosts-file name", n)
	}
	if addrs, _ := r.LookupNetIP(ctx, "ip", "intranet."); len(addrs) != 1 {
		t.Errorf("alias, case and trailing dot: %v", addrs)
	}
	want := []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::1")}
	if addrs, _ := r.LookupNetIP(ctx, "ip", "localhost"); !slices.Equal(addrs, want) {
		t.Errorf("localhost: %v", addrs)
	}
	if addrs, _ := r.LookupNetIP(ctx, "ip6", "localhost"); !slices.Equal(addrs, want[1:]) {
		t.Errorf("localhost ip6: %v", addrs)
	}
	// A name that is not in the file goes to DNS.
	if addrs, err := r.LookupNetIP(ctx, "ip4", "v4only.test"); err != nil || len(addrs) != 1 {
		t.Errorf("fallback to DNS: %v %v", addrs, err)
	}
}
