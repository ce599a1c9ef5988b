package crawl

import (
	"fmt"
	"strings"
	"testing"
)

func TestTwin(t *testing.T) {
	for in, want := range map[string]string{
		"http://example.com":           "http://www.example.com",
		"https://www.example.com:8443": "https://example.com:8443",
		"http://127.0.0.1:8080":        "",
		"http://[::1]:80":              "",
	} {
		if got := twin(in); got != want {
			t.Errorf("twin(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTrap(t *testing.T) {
	for u, trapped := range map[string]bool{
		"http://a.test/":                                 false,
		"http://a.test/2024/01/01/post":                  false,
		"http://a.test/a/b/a/b/a/b":                      false,
		"http://a.test/a/a/a/a/":                         true,
		"http://a.test/" + strings.Repeat("x/", 33):      true,
		"http://a.test/" + strings.Repeat("x", 2100):     true,
		"http://a.test/s?a=1&a=2":                        false,
		"http://a.test/s?a=1&b=1&a=1&a=1":                true,
		"http://a.test/s?q=" + strings.Repeat("z", 1100): true,
		manyParams(16):                                   false,
		manyParams(17):                                   true,
	} {
		if got := trap(u) != ""; got != trapped {
			t.Errorf("trap(%.60q) = %v, want %v", u, got, trapped)
		}
	}
}

// manyParams is a URL with n distinct query parameters.
func manyParams(n int) string {
	q := make([]string, n)
	for i := range q {
		q[i] = fmt.Sprintf("k%d=v", i)
	}
	return "http://a.test/s?" + strings.Join(q, "&")
}
