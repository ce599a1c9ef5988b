package smtpprobe

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"time"

	"golang.org/x/net/proxy"

	"github.com/surveyor/surveyor/pkg/netguard"
)

// ParseProxy reads a SOCKS5 proxy URL, socks5://[user:pass@]host:port.
// Only socks5: with socks5h the proxy would resolve names, and DNS stays
// ours so that the guard sees every address.
func ParseProxy(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, errors.New("not a URL")
	}
	if u.Scheme != "socks5" {
		return nil, fmt.Errorf("scheme %q, want socks5://[user:pass@]host:port", u.Scheme)
	}
	if u.Hostname() == "" || u.Port() == "" {
		return nil, errors.New("want socks5://[user:pass@]host:port")
	}
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return nil, errors.New("a proxy URL has no path, query or fragment")
	}
	return u, nil
}

// ProxyError is a failure to reach the SMTP proxy itself. It says nothing
// about the mail server behind it.
type ProxyError struct {
	Addr string
	Err  error
}

func (e *ProxyError) Error() string { return fmt.Sprintf("SMTP proxy %s: %v", e.Addr, e.Err) }
func (e *ProxyError) Unwrap() error { return e.Err }

// dialer connects to mail servers the policy allows, directly or through a
// SOCKS5 proxy. Either way it connects to the address it checked: the
// proxy is given the IP literal, never a name.
type dialer struct {
	direct  *netguard.Dialer
	socks   proxy.ContextDialer // nil: direct
	policy  netguard.Policy
	timeout time.Duration
}

func newDialer(o Options) (*dialer, error) {
	d := &dialer{
		direct:  &netguard.Dialer{Resolver: o.Resolver, Policy: o.Targets, Timeout: o.ConnectTimeout},
		policy:  o.Targets,
		timeout: o.ConnectTimeout,
	}
	if o.Proxy == nil {
		return d, nil
	}
	var auth *proxy.Auth
	if u := o.Proxy.User; u != nil {
		pass, _ := u.Password()
		auth = &proxy.Auth{User: u.Username(), Password: pass}
	}
	// The proxy's own address is configuration, not a target: no policy.
	addr := o.Proxy.Host
	fwd := forward{addr: addr, d: net.Dialer{Timeout: o.ConnectTimeout}}
	s, err := proxy.SOCKS5("tcp", addr, auth, fwd)
	if err != nil {
		return nil, err
	}
	d.socks = s.(proxy.ContextDialer)
	return d, nil
}

// dial connects to ap, the address of mail host host.
func (d *dialer) dial(ctx context.Context, host string, ap netip.AddrPort) (net.Conn, error) {
	if d.socks == nil {
		return d.direct.DialContext(ctx, "tcp", ap.String())
	}
	if !d.policy.Allows(ap.Addr()) {
		return nil, &netguard.RefusedError{Host: host, Addr: ap.Addr()}
	}
	// The connect timeout covers the proxy's connection to the server too.
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	return d.socks.DialContext(ctx, "tcp", ap.String())
}

// forward connects to the proxy and marks its failures as ProxyError.
type forward struct {
	addr string
	d    net.Dialer
}

func (f forward) Dial(network, addr string) (net.Conn, error) {
	return f.DialContext(context.Background(), network, addr)
}

func (f forward) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := f.d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, &ProxyError{Addr: f.addr, Err: err}
	}
	return c, nil
}
