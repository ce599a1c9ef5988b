package normalize

import (
	"errors"
	"net/url"
	"testing"

	"github.com/surveyor/surveyor/pkg/job"
)

func TestParse(t *testing.T) {
	base, _ := url.Parse("http://site.test/dir/page.html?x=1")
	cases := []struct{ in, want string }{
		{"HTTP://Site.TEST:80/a", "http://site.test/a"},
		{"https://site.test:443/a", "https://site.test/a"},
		{"http://site.test:8080/a", "http://site.test:8080/a"},
		{"https://site.test:80/a", "https://site.test:80/a"},
		{"http://site.test", "http://site.test/"},
		{"http://site.test./a", "http://site.test/a"},
		{"/a/./b/../c", "http://site.test/a/c"},
		{"http://site.test/a/./b/../../c/.", "http://site.test/c/"},
		{"../../../up", "http://site.test/up"},
		{"sibling", "http://site.test/dir/sibling"},
		{"?q=2", "http://site.test/dir/page.html?q=2"},
		{"#frag", "http://site.test/dir/page.html?x=1"},
		{"/p#frag", "http://site.test/p"},
		{"/%7euser/%41b", "http://site.test/~user/Ab"},
		{"/a%2fb%2Fc", "http://site.test/a%2Fb%2Fc"},
		{"/caf%c3%a9", "http://site.test/caf%C3%A9"},
		{"/café", "http://site.test/caf%C3%A9"},
		{"/100%", "http://site.test/100%25"},
		{"/a b", "http://site.test/a%20b"},
		{"/s?q=a b&r=%7e", "http://site.test/s?q=a%20b&r=~"},
		{"/s?PHPSESSID=abc123&page=2", "http://site.test/s?page=2"},
		{"/s?page=2&sid=9f8e&jsessionid=x", "http://site.test/s?page=2"},
		{"/s?sid=1", "http://site.test/s"},
		{"/cart;jsessionid=ABCDEF?x=1", "http://site.test/cart?x=1"},
		{"/cart;jsessionid=ABCDEF/more", "http://site.test/cart/more"},
		{"http://bücher.example/", "http://xn--bcher-kva.example/"},
		{"http://BÜCHER.example:80/", "http://xn--bcher-kva.example/"},
		{"http://[2001:DB8::1]:80/", "http://[2001:db8::1]/"},
		{"//other.test/x", "http://other.test/x"},
		{"http://my_host.test/", "http://my_host.test/"},
		{"/p?", "http://site.test/p"},
	}
	for _, c := range cases {
		got, err := Parse(c.in, base)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.in, err)
			continue
		}
		if got != c.want {
			t.Errorf("Parse(%q) = %q, want %q", c.in, got, c.want)
		}
		// The normalized form is a fixed point and survives net/url.
		again, err := Parse(got, nil)
		if err != nil || again != got {
			t.Errorf("Parse(%q) = %q, %v: not a fixed point", got, again, err)
		}
		if u, err := url.Parse(got); err != nil || u.String() != got {
			t.Errorf("url.Parse(%q).String() = %q", got, u)
		}
	}
}

func TestParseRejects(t *testing.T) {
	base, _ := url.Parse("http://site.test/")
	for _, in := range []string{"mailto:a@site.test", "javascript:void(0)", "tel:+123", "data:text/html,hi", "ftp://site.test/"} {
		if _, err := Parse(in, base); !errors.Is(err, job.ErrScheme) {
			t.Errorf("Parse(%q) err = %v, want ErrScheme", in, err)
		}
	}
	for _, in := range []string{"http://user:pw@site.test/", "http://site.test:99999/", "http://site.test:x/", "http:///nohost"} {
		if got, err := Parse(in, base); err == nil {
			t.Errorf("Parse(%q) = %q, want an error", in, got)
		}
	}
}
