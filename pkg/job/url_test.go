package job

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/idna"

	"github.com/surveyor/surveyor/pkg/netguard"
)

func TestParseTarget(t *testing.T) {
	long := "https://example.com/" + strings.Repeat("a", 2048-len("https://example.com/"))
	cases := []struct {
		in, want, err string
		private       bool
	}{
		{in: "example.com", want: "https://example.com/"},
		{in: "  Example.COM/Path?q=1#frag ", want: "https://example.com/Path?q=1"},
		{in: "http://example.com:80/", want: "http://example.com/"},
		{in: "https://example.com:443", want: "https://example.com/"},
		{in: "https://example.com:8443/x", want: "https://example.com:8443/x"},
		{in: "example.com:8080/x", want: "https://example.com:8080/x"},
		{in: "https://bücher.de/", want: "https://xn--bcher-kva.de/"},
		{in: "münchen.example", want: "https://xn--mnchen-3ya.example/"},
		{in: "https://93.184.215.14/", want: "https://93.184.215.14/"},
		{in: "https://[2606:4700::1111]/", want: "https://[2606:4700::1111]/"},
		{in: "http://10.1.2.3/", err: "non-public"},
		{in: "http://127.0.0.1:8080/", err: "non-public"},
		{in: "http://[::1]/", err: "non-public"},
		{in: "http://[::ffff:192.168.1.1]/", err: "non-public"},
		{in: "http://169.254.169.254/latest/meta-data", err: "non-public"},
		{in: "http://localhost/", err: "non-public"},
		{in: "http://127.0.0.1:8080/", want: "http://127.0.0.1:8080/", private: true},
		{in: "https://user:pass@example.com/", err: "user info"},
		{in: "ftp://example.com/file", err: "scheme"},
		{in: "mailto:a@example.com", err: "scheme"},
		{in: "javascript:alert(1)", err: "scheme"},
		{in: "https:///path", err: "host"},
		{in: "", err: "empty"},
		{in: "https://exa mple.com/", err: "not a valid URL"},
		{in: "https://example.com:99999/", err: "port"},
		{in: long, want: long},
		{in: long + "b", err: "2048"},
		{in: long + " ", err: "2048"}, // characters as sent
		{in: "https://a.example/" + strings.Repeat("é", 2000), err: "once normalized"},
		{in: " \t\n", err: "empty"},
		{in: "https://example.com./", want: "https://example.com/"},
		{in: "https://./", err: "host"},
		{in: "example.com:08443", want: "https://example.com:8443/"},
		{in: "https://[2606:4700:0::AbCd]/", want: "https://[2606:4700::abcd]/"},
		{in: "https://[fe80::1%25eth0]/", err: "host name", private: true},
		{in: "https://my_host.example/", err: "host name"},
		{in: "https://-x.example/", err: "host name"},
		{in: "https://xn--zz.example/", err: "host name"},
		{in: "https://app.localhost/", err: "non-public"},
		{in: "https://app.localhost/", want: "https://app.localhost/", private: true},
	}
	for _, c := range cases {
		targets := netguard.PublicOnly
		if c.private {
			targets = netguard.AllowPrivate
		}
		got, err := ParseTarget(c.in, targets)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseTarget(%q) = %q, %v; want an error containing %q", c.in, got, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("ParseTarget(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
		if again, err := ParseTarget(got, targets); err != nil || again != got {
			t.Errorf("ParseTarget(%q) = %q, %v: the canonical form is not a fixed point", got, again, err)
		}
	}
}

// TestParseLink shows where a link's host rules differ from a target's:
// browsers follow links to hosts with underscores or odd hyphens, so the
// crawler reads them (and finds them out of scope) rather than drop them.
func TestParseLink(t *testing.T) {
	base, _ := url.Parse("https://site.example/dir/page")
	cases := []struct{ in, want, err string }{
		{in: "other", want: "https://site.example/dir/other"},
		{in: "//My_Host.Example:443/x#f", want: "https://my_host.example/x"},
		{in: "http://-x.example/", want: "http://-x.example/"},
		{in: "http://BÜCHER.example:80/", want: "http://xn--bcher-kva.example/"},
		{in: "http://[2001:DB8::1]:8080/", want: "http://[2001:db8::1]:8080/"},
		{in: "http://[::FFFF:1.2.3.4]/", want: "http://[::ffff:1.2.3.4]/"},
		{in: "http://xn--zz.example/", err: "host name"},
		{in: "mailto:a@site.example", err: "scheme"},
		{in: "http://u@site.example/", err: "user info"},
		{in: "http://site.example:0/", err: "port"},
	}
	for _, c := range cases {
		u, err := ParseLink(c.in, base)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseLink(%q) = %v, %v; want an error containing %q", c.in, u, err, c.err)
			}
			continue
		}
		if err != nil || u.String() != c.want {
			t.Errorf("ParseLink(%q) = %v, %v; want %q", c.in, u, err, c.want)
		}
	}
	if _, err := ParseLink("javascript:void(0)", base); !errors.Is(err, ErrScheme) {
		t.Errorf("javascript: link gave %v, want ErrScheme", err)
	}
}

// TestPlainHostNeedsNoProfile holds the fast path to what it skips: a host
// that plainHost passes once lower-cased is what both IDNA profiles make
// of it.
func TestPlainHostNeedsNoProfile(t *testing.T) {
	hosts := []string{"a", "example.com", "a-b.c-d.example", "0a.example", "x1", "a.b.c.d.e", "WWW.Example.COM"}
	const alphabet = "aB0-.x"
	for i := range 20000 { // every string of up to 6 characters over alphabet
		s := ""
		for n := i; n > 0; n /= len(alphabet) + 1 {
			if d := n % (len(alphabet) + 1); d > 0 {
				s += alphabet[d-1 : d]
			}
		}
		hosts = append(hosts, s, "xn--"+s)
	}
	for _, h := range hosts {
		lower := strings.ToLower(h)
		if !plainHost(lower) {
			continue
		}
		for name, p := range map[string]*idna.Profile{"target": targetHosts, "link": linkHosts} {
			if got, err := p.ToASCII(h); err != nil || got != lower {
				t.Fatalf("plainHost(%q) but the %s profile gives %q, %v", lower, name, got, err)
			}
		}
	}
}

// A list of ranges lets in the IP literals it holds, and localhost only
// when it holds 127.0.0.1.
func TestParseTargetRangeList(t *testing.T) {
	targets, err := netguard.ParsePolicy("127.0.0.2/32,fd00:1::/48")
	if err != nil {
		t.Fatal(err)
	}
	for in, ok := range map[string]bool{
		"http://127.0.0.2:8080/":     true,
		"http://[::ffff:127.0.0.2]/": true,
		"http://[fd00:1:0:1::9]/":    true,
		"http://127.0.0.1:8080/":     false,
		"http://[fd00:2::9]/":        false,
		"http://localhost/":          false,
		"http://93.184.215.14/":      true,
		"http://intranet.example/":   true, // names are checked when dialed
	} {
		if _, err := ParseTarget(in, targets); (err == nil) != ok {
			t.Errorf("ParseTarget(%q): %v, want allowed %v", in, err, ok)
		}
	}
}
