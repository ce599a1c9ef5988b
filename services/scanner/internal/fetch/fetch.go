// Package fetch downloads a stranger's web page the way a browser would,
// within bounds: every connection goes through netguard (so every redirect
// is checked too), bodies are capped, redirect chains are limited, and each
// phase has its own timeout. A certificate that fails verification is
// recorded, not fatal, because the scan is about what the site runs.
package fetch

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptrace"
	"net/url"
	"strings"
	"time"

	"github.com/surveyor/surveyor/pkg/netguard"
)

// Options configure a Client. Zero durations, body limit and strings take
// the defaults.
type Options struct {
	UserAgent      string
	Accept         string
	AcceptLanguage string
	BodyLimit      int64 // bytes of decoded body kept; the rest is discarded
	MaxRedirects   int   // hops followed before failing (0: none; negative: the default)
	DialTimeout    time.Duration
	TLSTimeout     time.Duration
	HeaderTimeout  time.Duration // from request sent to response headers
	BodyTimeout    time.Duration // reading the body; on expiry the part read is kept
	Resolver       netguard.Resolver
	Targets        netguard.Policy // addresses that may be connected to
	RootCAs        *x509.CertPool  // nil means the system roots
}

// Defaults a browser-like fetch uses when Options leave them empty.
const (
	DefaultUserAgent      = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
	DefaultAccept         = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8"
	DefaultAcceptLanguage = "en-US,en;q=0.9"
	DefaultBodyLimit      = 5 << 20
	DefaultMaxRedirects   = 10
)

// Client fetches pages. It is safe for concurrent use; connections are
// pooled across scans.
type Client struct {
	opts      Options
	transport *http.Transport
}

// New builds a Client from o.
func New(o Options) *Client {
	o.UserAgent = or(o.UserAgent, DefaultUserAgent)
	o.Accept = or(o.Accept, DefaultAccept)
	o.AcceptLanguage = or(o.AcceptLanguage, DefaultAcceptLanguage)
	if o.BodyLimit <= 0 {
		o.BodyLimit = DefaultBodyLimit
	}
	if o.MaxRedirects < 0 {
		o.MaxRedirects = DefaultMaxRedirects
	}
	o.DialTimeout = orDur(o.DialTimeout, 5*time.Second)
	o.TLSTimeout = orDur(o.TLSTimeout, 5*time.Second)
	o.HeaderTimeout = orDur(o.HeaderTimeout, 10*time.Second)
	o.BodyTimeout = orDur(o.BodyTimeout, 10*time.Second)
	d := &netguard.Dialer{Resolver: o.Resolver, Policy: o.Targets, Timeout: o.DialTimeout}
	t := &http.Transport{
		Proxy:       nil, // a proxy would bypass the address check
		DialContext: d.DialContext,
		// Verification happens after the handshake (see verify) so that a
		// bad certificate is reported instead of ending the scan.
		TLSClientConfig:       &tls.Config{InsecureSkipVerify: true},
		TLSHandshakeTimeout:   o.TLSTimeout,
		ResponseHeaderTimeout: o.HeaderTimeout,
		ForceAttemptHTTP2:     true,
		DisableCompression:    true, // we ask for br too and decode ourselves
		MaxIdleConns:          256,
		// A caller often sends many pages of one site at once; with only a
		// few idle connections kept per host, every scan past those would
		// dial (and shake hands) again. MaxIdleConns still bounds the pool.
		MaxIdleConnsPerHost:    64,
		IdleConnTimeout:        30 * time.Second,
		MaxResponseHeaderBytes: 256 << 10,
	}
	return &Client{opts: o, transport: t}
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func orDur(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// Close drops pooled connections.
func (c *Client) Close() { c.transport.CloseIdleConnections() }

// Response is what a fetch saw.
type Response struct {
	URL       *url.URL // the final URL
	Status    int
	Header    http.Header    // the final response's headers
	Cookies   []*http.Cookie // set by any response of the chain, in order
	Redirects []string       // every URL that answered with a redirect, in order
	Body      []byte         // content-encoding removed; text decoded to UTF-8
	Truncated bool           // the body limit or body timeout cut the body
	HTML      bool           // the body is an HTML document
	RemoteIP  string         // the address the final response came from
	Elapsed   time.Duration  // from the first request to the final response's headers
	TLS       *tls.ConnectionState
	VerifyErr error // why the final certificate failed verification, or nil
}

// ErrTooManyRedirects ends a chain longer than MaxRedirects.
var ErrTooManyRedirects = errors.New("too many redirects")

// Get fetches rawURL and follows redirects.
func (c *Client) Get(ctx context.Context, rawURL string) (*Response, error) {
	u, err := parseTarget(rawURL)
	if err != nil {
		return nil, err
	}
	jar, _ := cookiejar.New(nil)
	out := &Response{}
	start := time.Now()
	for hop := 0; ; hop++ {
		reqCtx, cancel := context.WithCancel(ctx)
		resp, ip, err := c.do(reqCtx, u, jar)
		if err != nil {
			cancel()
			return nil, err
		}
		out.Cookies = append(out.Cookies, resp.Cookies()...)
		loc := resp.Header.Get("Location")
		if !isRedirect(resp.StatusCode) || loc == "" {
			out.Elapsed = time.Since(start)
			c.finish(out, resp, cancel, u, ip, c.opts.BodyLimit)
			return out, nil
		}
		resp.Body.Close()
		cancel()
		out.Redirects = append(out.Redirects, u.String())
		if hop >= c.opts.MaxRedirects {
			return nil, fmt.Errorf("%w (more than %d)", ErrTooManyRedirects, c.opts.MaxRedirects)
		}
		next, err := u.Parse(loc)
		if err != nil || (next.Scheme != "http" && next.Scheme != "https") || next.Host == "" {
			return nil, fmt.Errorf("redirect to unusable location %q", loc)
		}
		next.Fragment = ""
		u = next
	}
}

// GetOne makes a single request without following redirects and keeps at
// most limit bytes of body. The scanner uses it for robots.txt and for the
// plain-http probe of the security grade.
func (c *Client) GetOne(ctx context.Context, rawURL string, limit int64) (*Response, error) {
	u, err := parseTarget(rawURL)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	reqCtx, cancel := context.WithCancel(ctx)
	resp, ip, err := c.do(reqCtx, u, nil)
	if err != nil {
		cancel()
		return nil, err
	}
	out := &Response{Cookies: resp.Cookies(), Elapsed: time.Since(start)}
	c.finish(out, resp, cancel, u, ip, limit)
	return out, nil
}

func parseTarget(rawURL string) (*url.URL, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("bad URL: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("bad URL %q: want http or https with a host", rawURL)
	}
	return u, nil
}

func isRedirect(code int) bool {
	switch code {
	case 301, 302, 303, 307, 308:
		return true
	}
	return false
}

// do sends one GET and returns the response with its headers read and the
// address it came from.
func (c *Client) do(ctx context.Context, u *url.URL, jar http.CookieJar) (*http.Response, string, error) {
	var ip string
	trace := &httptrace.ClientTrace{GotConn: func(ci httptrace.GotConnInfo) {
		if a, ok := ci.Conn.RemoteAddr().(*net.TCPAddr); ok {
			ip = a.AddrPort().Addr().Unmap().String()
		}
	}}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, "", err
	}
	req.Header.Set("User-Agent", c.opts.UserAgent)
	req.Header.Set("Accept", c.opts.Accept)
	req.Header.Set("Accept-Language", c.opts.AcceptLanguage)
	req.Header.Set("Accept-Encoding", "gzip, deflate, br")
	req.Header.Set("Upgrade-Insecure-Requests", "1")
	if jar != nil {
		for _, ck := range jar.Cookies(u) {
			req.AddCookie(ck)
		}
	}
	resp, err := c.transport.RoundTrip(req)
	if err != nil {
		return nil, "", err
	}
	if jar != nil {
		jar.SetCookies(u, resp.Cookies())
	}
	return resp, ip, nil
}

// finish reads and decodes the final body and fills the rest of out. A body
// that breaks off is kept as far as it arrived and marked truncated: the
// headers alone are worth a scan. cancel aborts the request.
func (c *Client) finish(out *Response, resp *http.Response, cancel context.CancelFunc, u *url.URL, ip string, limit int64) {
	defer cancel()
	defer resp.Body.Close()
	out.URL, out.Status, out.Header, out.RemoteIP = u, resp.StatusCode, resp.Header, ip
	if resp.TLS != nil {
		out.TLS = resp.TLS
		out.VerifyErr = c.verify(resp.TLS, u.Hostname())
	}
	// The body gets its own deadline: a page that trickles forever is
	// scanned on what arrived.
	timer := time.AfterFunc(c.opts.BodyTimeout, cancel)
	defer timer.Stop()
	body, truncated, err := readBody(resp.Body, resp.Header.Get("Content-Encoding"), resp.ContentLength, limit)
	out.Truncated = truncated || err != nil
	ctype := resp.Header.Get("Content-Type")
	out.HTML = isHTML(ctype, body)
	if out.HTML || strings.HasPrefix(ctype, "text/") {
		body = toUTF8(body, ctype)
	}
	out.Body = body
}

// verify checks the peer's chain as a browser would, returning why not.
func (c *Client) verify(cs *tls.ConnectionState, host string) error {
	if len(cs.PeerCertificates) == 0 {
		return errors.New("no certificate")
	}
	inter := x509.NewCertPool()
	for _, cert := range cs.PeerCertificates[1:] {
		inter.AddCert(cert)
	}
	_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{
		DNSName:       host,
		Roots:         c.opts.RootCAs,
		Intermediates: inter,
	})
	return err
}
