package scan

import (
	"context"
	"crypto/x509"
	"net"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/surveyor/surveyor/pkg/config"
	"github.com/surveyor/surveyor/pkg/fingerprint"
	"github.com/surveyor/surveyor/pkg/job"
	"github.com/surveyor/surveyor/pkg/netguard"
)

// fixtureTechs are fingerprints written for these tests, shaped like the
// built-in ones but independent of the database as it grows.
const fixtureTechs = `{
 "WordPress": {"cats": [1], "website": "https://wordpress.org", "implies": "PHP",
   "meta": {"generator": "^WordPress ?([\\d.]+)?\\;version:\\1"},
   "scriptSrc": "/wp-(?:content|includes)/"},
 "Nginx": {"cats": [22], "website": "https://nginx.org",
   "headers": {"Server": "nginx(?:/([\\d.]+))?\\;version:\\1"}},
 "PHP": {"cats": [27], "website": "https://php.net",
   "headers": {"X-Powered-By": "^PHP/?([\\d.]+)?\\;version:\\1"}, "cookies": {"PHPSESSID": ""}},
 "jQuery": {"cats": [59], "website": "https://jquery.com",
   "scriptSrc": "jquery[.-]([\\d.]+)(?:\\.min)?\\.js\\;version:\\1"},
 "Express": {"cats": [18], "website": "https://expressjs.com",
   "headers": {"X-Powered-By": "^Express$"}},
 "Shopify": {"cats": [6], "website": "https://shopify.com",
   "headers": {"X-ShopId": ""}, "scripts": "Shopify\\.theme"}
}`

func fixtureEngine(t testing.TB) func() *fingerprint.Engine {
	t.Helper()
	techs, err := fingerprint.ParseTechnologies([]byte(fixtureTechs))
	if err != nil {
		t.Fatal(err)
	}
	list := make([]*fingerprint.Technology, 0, len(techs))
	for _, tech := range techs {
		list = append(list, tech)
	}
	e := fingerprint.NewEngine(fingerprint.NewDB(list...))
	return func() *fingerprint.Engine { return e }
}

// testDNS is a DNS server on 127.0.0.1:0 that answers every name in a with
// that address, and "rebind.test" first with a public-looking address and
// then with loopback (TTL 0), as a rebinding attacker would.
type testDNS struct {
	mu       sync.Mutex
	a        map[string]string
	extra    map[string][]string // "name. TYPE" -> RR text
	rebinds  int
	rebindTo string
}

func (d *testDNS) ServeDNS(w dns.ResponseWriter, req *dns.Msg) {
	q := req.Question[0]
	m := new(dns.Msg)
	m.SetReply(req)
	d.mu.Lock()
	defer d.mu.Unlock()
	name := strings.TrimSuffix(strings.ToLower(q.Name), ".")
	switch {
	case name == "rebind.test" && q.Qtype == dns.TypeA:
		d.rebinds++
		ip := "203.0.113.10"
		if d.rebinds > 1 {
			ip = d.rebindTo
		}
		rr, _ := dns.NewRR(q.Name + " 0 IN A " + ip)
		m.Answer = append(m.Answer, rr)
	case d.a[name] != "" && q.Qtype == dns.TypeA:
		rr, _ := dns.NewRR(q.Name + " 60 IN A " + d.a[name])
		m.Answer = append(m.Answer, rr)
	case d.a[name] == "" && name != "rebind.test" && len(d.extra[q.Name+" "+dns.TypeToString[q.Qtype]]) == 0:
		m.Rcode = dns.RcodeNameError
	}
	for _, s := range d.extra[q.Name+" "+dns.TypeToString[q.Qtype]] {
		rr, err := dns.NewRR(s)
		if err != nil {
			panic(err)
		}
		m.Answer = append(m.Answer, rr)
	}
	w.WriteMsg(m)
}

// add sets the records answered for "name. TYPE".
func (d *testDNS) add(key string, rrs ...string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.extra[key] = rrs
}

func startDNS(t testing.TB, d *testDNS) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &dns.Server{PacketConn: pc, Handler: d}
	started := make(chan struct{})
	srv.NotifyStartedFunc = func() { close(started) }
	go srv.ActivateAndServe()
	<-started
	t.Cleanup(func() { srv.Shutdown() })
	return pc.LocalAddr().String()
}

// harness is a scanner whose names resolve through a test DNS server.
type harness struct {
	t   testing.TB
	dns *testDNS
	cfg Config
	eng func() *fingerprint.Engine
}

func newHarness(t testing.TB) *harness {
	d := &testDNS{a: map[string]string{
		"site.test": "127.0.0.1", "www.site.test": "127.0.0.1", "other.test": "127.0.0.1",
		"example.com": "127.0.0.1",
	}, extra: map[string][]string{}, rebindTo: "127.0.0.1"}
	cfg := config.Defaults[Config]()
	cfg.DNSServer = startDNS(t, d)
	cfg.Targets = netguard.AllowPrivate
	cfg.Timeout = 5 * time.Second
	cfg.BodyTimeout = 2 * time.Second
	cfg.HeaderTimeout = 2 * time.Second
	return &harness{t: t, dns: d, cfg: cfg, eng: fixtureEngine(t)}
}

// trust makes the scanner verify certificates of srv.
func (h *harness) trust(srv *httptest.Server) {
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	h.cfg.RootCAs = pool
}

func (h *harness) scanner() *Scanner {
	s := New(h.cfg, h.eng)
	h.t.Cleanup(s.Close)
	return s
}

// scan runs one job, its options made canonical as ingest makes them,
// through a fresh scanner.
func (h *harness) scan(url string, options ...string) (*job.ScanResult, error) {
	h.t.Helper()
	return scanWith(h.scanner(), url, options...)
}

func scanWith(s *Scanner, url string, options ...string) (*job.ScanResult, error) {
	res, err := s.Handle(context.Background(), &job.Job{ID: "test", Kind: job.Scan, URL: url, Options: job.CanonicalOptions(options)}, nil)
	if err != nil {
		return nil, err
	}
	return res.(*job.ScanResult), nil
}

// at rewrites a test server's URL to use host name instead of 127.0.0.1.
func at(srv *httptest.Server, host string) string {
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(strings.TrimPrefix(srv.URL, "http://"), "https://"))
	scheme, _, _ := strings.Cut(srv.URL, "://")
	return scheme + "://" + host + ":" + port
}

func techByName(res *job.ScanResult, name string) (job.Technology, bool) {
	for _, d := range res.Technologies {
		if d.Name == name {
			return d, true
		}
	}
	return job.Technology{}, false
}
