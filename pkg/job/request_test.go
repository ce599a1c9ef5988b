package job

import (
	"strings"
	"testing"
)

func TestKey(t *testing.T) {
	scan := func(url string, opts ...string) Request {
		return Request{Kind: Scan, URL: url, Options: CanonicalOptions(opts)}
	}
	same := [][2]Request{
		{scan("https://a.example/"), scan("https://a.example/", "technologies")},
		{scan("https://a.example/", "tls", "dns"), {Kind: Scan, URL: "https://a.example/", Options: CanonicalOptions([]string{"dns", "tls"}), Force: true}},
	}
	for _, p := range same {
		if p[0].Key() != p[1].Key() {
			t.Errorf("%+v and %+v have different keys", p[0], p[1])
		}
	}
	distinct := []Request{
		scan("https://a.example/"),
		scan("https://a.example/", "tls"),
		scan("https://b.example/"),
		{Kind: Sitemap, URL: "https://a.example/", MaxPages: 10},
		{Kind: Sitemap, URL: "https://a.example/", MaxPages: 20},
		{Kind: Email, Email: "a@a.example"},
	}
	seen := map[string]int{}
	for i, r := range distinct {
		if j, ok := seen[r.Key()]; ok {
			t.Errorf("%+v shares its key with %+v", r, distinct[j])
		}
		seen[r.Key()] = i
		j := Job{Kind: r.Kind, URL: r.URL, Email: r.Email, Options: r.Options, MaxPages: r.MaxPages}
		if KeyOf(&j) != r.Key() {
			t.Errorf("KeyOf(%+v) = %q, want %q", j, KeyOf(&j), r.Key())
		}
	}
}

func TestNormalizeEmail(t *testing.T) {
	cases := []struct{ in, want, err string }{
		{in: " Bob@Example.COM ", want: "Bob@example.com"},
		{in: "not an address", want: "not an address"},
		{in: "a@b@C.example", want: "a@b@c.example"},
		{in: "\n", want: "\n"}, // nothing but white space: its syntax is the result
		{in: strings.Repeat("é", 320), want: strings.Repeat("é", 320)},
		{in: "", err: "empty"},
		{in: strings.Repeat("a", 321), err: "320"},
		{in: " " + strings.Repeat("a", 320), err: "320"}, // characters as sent
	}
	for _, c := range cases {
		got, err := NormalizeEmail(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("NormalizeEmail(%q) = %q, %v; want an error containing %q", c.in, got, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("NormalizeEmail(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}
