package verify

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"github.com/surveyor/surveyor/pkg/job"
	"github.com/surveyor/surveyor/pkg/netguard"
	"github.com/surveyor/surveyor/pkg/resolver"
	"github.com/surveyor/surveyor/services/emailcheck/internal/mxlookup"
	"github.com/surveyor/surveyor/services/emailcheck/internal/smtpprobe"
	"github.com/surveyor/surveyor/services/emailcheck/internal/testservers"
)

// Benchmark shape (issue 6): 1,000 addresses over 20 domains, mail servers
// that take 10 ms per reply, 2 connections per server at most.
const (
	benchAddresses = 1000
	benchDomains   = 20
	benchServers   = 5
	benchLatency   = 10 * time.Millisecond
	benchWorkers   = 100
	benchPerServer = 2
)

// BenchmarkSharedVsFresh validates the same addresses twice in one run:
// through Handler (pooled sessions, several RCPT TO per session, cached
// catch-all answers) and the naive way (a fresh connection per address
// with its own catch-all RCPT TO, as common validators do), both with at
// most benchPerServer connections per server, and reports both rates and
// their ratio.
func BenchmarkSharedVsFresh(b *testing.B) {
	bw := newBenchWorld(b)
	var shared, fresh time.Duration
	for range b.N {
		shared += bw.run(b, "shared", bw.cfg)
		n := newNaive(bw.cfg)
		start := time.Now()
		verdicts := runAll(bw.addrs, n.verify)
		fresh += time.Since(start)
		bw.check(b, "fresh", verdicts)
	}
	sharedRate := float64(b.N*benchAddresses) / shared.Seconds()
	freshRate := float64(b.N*benchAddresses) / fresh.Seconds()
	b.ReportMetric(sharedRate, "shared_validations/s")
	b.ReportMetric(freshRate, "fresh_validations/s")
	b.ReportMetric(sharedRate/freshRate, "x_vs_fresh")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkProxyVsDirect validates the same addresses through Handler
// twice a round: directly and through a SOCKS5 proxy on loopback
// (SMTP_PROXY), and reports both rates and their ratio.
func BenchmarkProxyVsDirect(b *testing.B) {
	bw := newBenchWorld(b)
	sp := testservers.StartSOCKS5(b, "", "")
	proxied := bw.cfg
	u, err := smtpprobe.ParseProxy("socks5://" + sp.Addr)
	if err != nil {
		b.Fatal(err)
	}
	proxied.Proxy = u
	var direct, viaProxy time.Duration
	for range b.N {
		direct += bw.run(b, "direct", bw.cfg)
		viaProxy += bw.run(b, "proxy", proxied)
	}
	if sp.Conns.Load() == 0 {
		b.Fatal("nothing went through the proxy")
	}
	directRate := float64(b.N*benchAddresses) / direct.Seconds()
	proxyRate := float64(b.N*benchAddresses) / viaProxy.Seconds()
	b.ReportMetric(directRate, "direct_validations/s")
	b.ReportMetric(proxyRate, "proxy_validations/s")
	b.ReportMetric(proxyRate/directRate, "x_proxy_vs_direct")
	b.ReportMetric(0, "ns/op")
}

// benchWorld is the benchmark's DNS zone, mail servers and addresses.
type benchWorld struct {
	cfg          Config
	addrs        []string
	unknownUsers int
	servers      []*testservers.SMTP
}

func newBenchWorld(b *testing.B) *benchWorld {
	bw := &benchWorld{}
	d := testservers.StartDNS(b)
	port, lns := testservers.Listeners(b, benchServers)
	for _, ln := range lns {
		bw.servers = append(bw.servers, testservers.ServeSMTP(b, ln, testservers.SMTPConfig{
			Latency: benchLatency,
			Rcpt: func(to string) error {
				if strings.HasPrefix(to, "x") && !strings.HasPrefix(to, "x-all") {
					return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "no such user"}
				}
				return nil
			},
		}))
	}
	for i := range benchDomains {
		dom := fmt.Sprintf("d%02d.bench", i)
		d.Add(b, fmt.Sprintf("%s. 3600 IN MX 10 mx.%s.", dom, dom),
			fmt.Sprintf("mx.%s. 3600 IN A %s", dom, testservers.IP(lns[i%benchServers])))
	}
	for i := range benchAddresses {
		local := fmt.Sprintf("user%d", i)
		if i%7 == 3 {
			local = fmt.Sprintf("x%d", i) // unknown users, spread over all servers
			bw.unknownUsers++
		}
		bw.addrs = append(bw.addrs, fmt.Sprintf("%s@d%02d.bench", local, i%benchDomains))
	}
	bw.cfg = Config{
		Targets: netguard.AllowPrivate, DNSServer: d.Addr, SMTPPort: port, HELO: "probe.test", From: "probe@probe.test",
		CacheTTL: time.Hour, PerServer: benchPerServer, Timeout: time.Minute,
		ConnectTimeout: 5 * time.Second, BannerTimeout: 5 * time.Second, CommandTimeout: 5 * time.Second,
		IdleTimeout: time.Minute,
	}
	return bw
}

// run validates every address through a new Handler (empty caches and
// pools) and returns the time it took.
func (bw *benchWorld) run(b *testing.B, mode string, cfg Config) time.Duration {
	h, err := NewHandler(cfg)
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	verdicts := runAll(bw.addrs, func(a string) job.Reachable { return h.Verify(context.Background(), a, false).Reachable })
	took := time.Since(start)
	h.Close()
	bw.check(b, mode, verdicts)
	return took
}

// check fails the benchmark on a wrong verdict or too many connections.
func (bw *benchWorld) check(b *testing.B, mode string, verdicts map[job.Reachable]int) {
	for i, s := range bw.servers {
		if m := s.MaxOpen(); m > benchPerServer {
			b.Fatalf("%s: server %d had %d connections open at once, limit %d", mode, i, m, benchPerServer)
		}
	}
	if verdicts[job.ReachableInvalid] != bw.unknownUsers || verdicts[job.ReachableUnknown] != 0 {
		b.Fatalf("%s verdicts %v", mode, verdicts)
	}
}

// runAll validates addrs with benchWorkers goroutines and counts verdicts.
func runAll(addrs []string, verify func(string) job.Reachable) map[job.Reachable]int {
	work := make(chan string)
	var mu sync.Mutex
	counts := map[job.Reachable]int{}
	var wg sync.WaitGroup
	for range benchWorkers {
		wg.Go(func() {
			for a := range work {
				v := verify(a)
				mu.Lock()
				counts[v]++
				mu.Unlock()
			}
		})
	}
	for _, a := range addrs {
		work <- a
	}
	close(work)
	wg.Wait()
	return counts
}

// naive is the baseline validator: DNS through the same caching resolver,
// then per address one new connection: greeting, EHLO, MAIL FROM, RCPT TO
// a random address (catch-all test), RCPT TO the address, QUIT.
type naive struct {
	cfg   Config
	res   *resolver.Resolver
	mu    sync.Mutex
	slots map[string]chan struct{} // per server, the same connection limit
}

func newNaive(cfg Config) *naive {
	return &naive{cfg: cfg, res: resolver.New(cfg.DNSServer), slots: map[string]chan struct{}{}}
}

func (n *naive) verify(addr string) job.Reachable {
	ctx := context.Background()
	domain := addr[strings.LastIndexByte(addr, '@')+1:]
	dns := mxlookup.Lookup(ctx, n.res, domain)
	if dns.NoDomain {
		return job.ReachableInvalid
	}
	ips, err := n.res.LookupNetIP(ctx, "ip4", dns.Hosts[0])
	if err != nil || len(ips) == 0 {
		return job.ReachableUnknown
	}
	server := netip.AddrPortFrom(ips[0], uint16(n.cfg.SMTPPort)).String()
	n.mu.Lock()
	slot := n.slots[server]
	if slot == nil {
		slot = make(chan struct{}, n.cfg.PerServer)
		n.slots[server] = slot
	}
	n.mu.Unlock()
	slot <- struct{}{}
	defer func() { <-slot }()

	conn, err := net.DialTimeout("tcp", server, n.cfg.ConnectTimeout)
	if err != nil {
		return job.ReachableUnknown
	}
	c, err := smtpprobe.NewClient(ctx, conn, dns.Hosts[0], n.cfg.BannerTimeout, n.cfg.CommandTimeout)
	if err != nil {
		return job.ReachableUnknown
	}
	defer c.Quit(ctx)
	if c.Hello(ctx, n.cfg.HELO) != nil || c.Mail(ctx, n.cfg.From, false) != nil {
		return job.ReachableUnknown
	}
	probe, err := c.Rcpt(ctx, randomLocal()+"@"+domain)
	if err != nil {
		return job.ReachableUnknown
	}
	r, err := c.Rcpt(ctx, addr)
	if err != nil {
		return job.ReachableUnknown
	}
	switch smtpprobe.Classify(r) {
	case smtpprobe.Accepted:
		if smtpprobe.Classify(probe) == smtpprobe.Accepted {
			return job.ReachableRisky
		}
		return job.ReachableSafe
	case smtpprobe.NoSuchUser:
		return job.ReachableInvalid
	}
	return job.ReachableUnknown
}
