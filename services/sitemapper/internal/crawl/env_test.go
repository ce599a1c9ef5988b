package crawl

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/surveyor/surveyor/pkg/config"
	"github.com/surveyor/surveyor/pkg/job"
	"github.com/surveyor/surveyor/pkg/netguard"
)

// hostsResolver answers the test's host names with 127.0.0.1, like an
// /etc/hosts file, and nothing else.
type hostsResolver map[string]bool

func (h hostsResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if h[strings.ToLower(host)] {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// testHosts are the names the test sites answer to. example.com is the
// name the httptest TLS certificate carries.
var testHosts = hostsResolver{"example.com": true, "www.example.com": true, "other.test": true}

// portMap sends connections for the default ports to the test servers, so
// the sites can be http://example.com/ and https://example.com/ as in real
// life. Everything else goes through the real netguard dialer unchanged.
type portMap struct {
	d     *netguard.Dialer
	ports map[string]string
}

func (p portMap) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	if m, ok := p.ports[port]; ok {
		port = m
	}
	return p.d.DialContext(ctx, network, net.JoinHostPort(host, port))
}

// hits counts requests by host and path (query included).
type hits struct {
	mu sync.Mutex
	n  map[string]int
}

func (h *hits) add(r *http.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.n == nil {
		h.n = map[string]int{}
	}
	h.n[strings.ToLower(r.Host)+r.URL.RequestURI()]++
}

func (h *hits) get(hostPath string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n[hostPath]
}

// prefixed sums the hits of every key that starts with prefix.
func (h *hits) prefixed(prefix string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for k, v := range h.n {
		if strings.HasPrefix(k, prefix) {
			n += v
		}
	}
	return n
}

// env is a site served on http://example.com/ (and https:// when tls is
// asked for) with a Handler that reaches it through the port map. Port 80
// of every name, 127.0.0.1 included, is the http server.
type env struct {
	t     testing.TB
	hits  *hits
	h     *Handler
	http  *httptest.Server
	https *httptest.Server
	conns atomic.Int32 // connections the servers accepted
}

func testConfig() Config {
	c := config.Defaults[Config]()
	c.Targets = netguard.AllowPrivate
	c.Timeout = 2 * time.Second
	c.JobBudget = 20 * time.Second
	return c
}

func newEnv(t testing.TB, site http.Handler, cfg Config, withTLS bool) *env {
	t.Helper()
	e := &env{t: t, hits: &hits{}}
	counted := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.hits.add(r)
		site.ServeHTTP(w, r)
	})
	countConns := func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			e.conns.Add(1)
		}
	}
	e.http = httptest.NewUnstartedServer(counted)
	e.http.Config.ConnState = countConns
	e.http.Start()
	t.Cleanup(e.http.Close)
	ports := map[string]string{"80": port(e.http.URL)}
	var tlsConf *tls.Config
	if withTLS {
		e.https = httptest.NewUnstartedServer(counted)
		e.https.Config.ConnState = countConns
		e.https.StartTLS()
		t.Cleanup(e.https.Close)
		ports["443"] = port(e.https.URL)
		pool := x509.NewCertPool()
		pool.AddCert(e.https.Certificate())
		tlsConf = &tls.Config{RootCAs: pool}
	}
	d := &netguard.Dialer{Resolver: testHosts, Policy: cfg.Targets, Timeout: time.Second}
	e.h = New(cfg, portMap{d: d, ports: ports})
	e.h.TLSClientConfig = tlsConf
	return e
}

func port(u string) string { return u[strings.LastIndexByte(u, ':')+1:] }

// progressLog records every progress report.
type progressLog struct {
	mu   sync.Mutex
	last job.SitemapProgress
	n    int
}

func (p *progressLog) Report(v any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.last = v.(job.SitemapProgress)
	p.n++
}

func (e *env) crawl(url string, maxPages int) (*job.SitemapResult, *progressLog, error) {
	e.t.Helper()
	p := &progressLog{}
	j := &job.Job{ID: "t", Kind: job.Sitemap, URL: url, MaxPages: maxPages}
	v, err := e.h.Handle(context.Background(), j, p)
	if err != nil {
		return nil, p, err
	}
	return v.(*job.SitemapResult), p, nil
}

func (e *env) mustCrawl(url string, maxPages int) *job.SitemapResult {
	e.t.Helper()
	res, _, err := e.crawl(url, maxPages)
	if err != nil {
		e.t.Fatalf("crawl %s: %v", url, err)
	}
	return res
}

// byURL indexes a result's pages.
func byURL(res *job.SitemapResult) map[string]job.SitemapPage {
	m := make(map[string]job.SitemapPage, len(res.Pages))
	for _, p := range res.Pages {
		m[p.URL] = p
	}
	return m
}
