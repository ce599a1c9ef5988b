package smtpprobe

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"

	"github.com/surveyor/surveyor/services/emailcheck/internal/testservers"
)

func TestParseProxy(t *testing.T) {
	for s, ok := range map[string]bool{
		"socks5://127.0.0.1:1080":                 true,
		"socks5://user:p%40ss@proxy.example:1080": true,
		"socks5://[::1]:1080/":                    true,
		"":                                        false,
		"127.0.0.1:1080":                          false,
		"socks5h://proxy.example:1080":            false, // the proxy would resolve names
		"http://proxy.example:3128":               false,
		"socks5://proxy.example":                  false,
		"socks5://:1080":                          false,
		"socks5://proxy.example:1080/x":           false,
		"socks5://proxy.example:1080?a=b":         false,
	} {
		if _, err := ParseProxy(s); (err == nil) != ok {
			t.Errorf("ParseProxy(%q): %v", s, err)
		}
	}
}

// TestProxyDown: a proxy that cannot be reached is a ProxyError, and the
// mail server behind it is not remembered as dead.
func TestProxyDown(t *testing.T) {
	l := newLab(t, 1)
	srv := testservers.ServeSMTP(t, l.lns[0], testservers.SMTPConfig{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close() // nothing listens here now
	u, _ := ParseProxy("socks5://" + ln.Addr().String())
	p := l.prober(t, func(o *Options) { o.Proxy = u })
	out := p.Check(context.Background(), []string{"mx0.lab.test"}, "a@lab.test", false)
	var pe *ProxyError
	if out.Checked || out.Connected || !errors.As(out.Err, &pe) || srv.Conns.Load() != 0 {
		t.Fatalf("proxy down gave %+v (server connections %d)", out, srv.Conns.Load())
	}
	ap := netip.MustParseAddrPort(l.lns[0].Addr().String())
	if err := p.deadErr(context.Background(), ap); err != nil {
		t.Errorf("the mail server was blamed for the proxy: %v", err)
	}
}
