package inspect

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/surveyor/surveyor/pkg/job"
)

func TestEmails(t *testing.T) {
	page := []byte(`<html><body>
<a href="mailto:Sales@Example.com?subject=Hi">Sales</a>
<a href="mailto:a%40b.org,support@example.com">two</a>
<img src="/img/logo@2x.png" alt="logo@2x.png">
<p>Write to jane.doe [at] example [dot] org or press(at)example(dot)co(dot)uk.</p>
<p>Also SALES@example.com again, and john {at} example {dot} net.</p>
<p>Assets: hero@3x.webp, icon@2x.svg, jquery@3.7.1, npm i react@18.2.0, user@localhost</p>
<p>Trailing dot: info@example.io.</p>
</body></html>`)
	m := scanMarkup(page)
	// Text as the fingerprint parser would give it: tags removed.
	text := stripTags(string(page))
	got := Emails(m.Mailto, text)
	want := []string{"sales@example.com", "a@b.org", "support@example.com", "jane.doe@example.org",
		"press@example.co.uk", "john@example.net", "info@example.io"}
	if !slices.Equal(got, want) {
		t.Errorf("emails\n got %q\nwant %q", got, want)
	}
	if got := Emails(nil, ""); got == nil || len(got) != 0 {
		t.Errorf("no addresses should be an empty list, got %#v", got)
	}
}

// stripTags is a crude text extractor for the test page.
func stripTags(s string) string {
	var b strings.Builder
	in := false
	for _, r := range s {
		switch {
		case r == '<':
			in = true
		case r == '>':
			in = false
			b.WriteByte(' ')
		case !in:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func TestScanMarkup(t *testing.T) {
	m := scanMarkup([]byte(`<script src="http://cdn.example.com/a.js"></script>
<script src="https://cdn.example.com/b.js"></script><script src="//cdn.example.com/c.js"></script>
<link rel="stylesheet" href="HTTP://cdn.example.com/s.css"><link rel="canonical" href="http://example.com/">
<img src="http://img.example.com/x.png"><iframe src="http://ads.example.com/f"></iframe>
<form action="http://example.com/login"></form><a href="http://example.com/">plain link</a>`))
	if want := []string{"http://cdn.example.com/a.js", "HTTP://cdn.example.com/s.css", "http://ads.example.com/f"}; !slices.Equal(m.Active, want) {
		t.Errorf("active %q", m.Active)
	}
	if len(m.Passive) != 1 || len(m.Forms) != 1 || len(m.Mailto) != 0 {
		t.Errorf("passive %q forms %q mailto %q", m.Passive, m.Forms, m.Mailto)
	}
}

func TestGradeStrongPage(t *testing.T) {
	h := http.Header{}
	h.Set("Strict-Transport-Security", "max-age=63072000; includeSubDomains; preload")
	h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self' 'nonce-abc' 'unsafe-inline'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer, strict-origin-when-cross-origin")
	h.Set("Permissions-Policy", "geolocation=()")
	yes := true
	s := Grade(Page{HTTPS: true, Header: h, HTTPSRedirect: &yes, Cookies: []*http.Cookie{
		{Name: "sid", Secure: true, HttpOnly: true, SameSite: http.SameSiteLaxMode},
	}})
	if s.Grade != "A" || s.Score != 100 || len(s.Issues) != 0 {
		t.Errorf("grade %s score %d issues %q", s.Grade, s.Score, s.Issues)
	}
	if len(s.Findings) != 10 || len(s.Cookies) != 1 || s.Cookies[0].SameSite != "lax" {
		t.Errorf("findings %d cookies %+v", len(s.Findings), s.Cookies)
	}
}

func TestGradeWeakPages(t *testing.T) {
	// Plain http, nothing set, a cookie without flags: every check fails.
	no := false
	s := Grade(Page{HTTPS: false, Header: http.Header{}, HTTPSRedirect: &no,
		Cookies: []*http.Cookie{{Name: "PHPSESSID"}}})
	if s.Grade != "F" || s.Score != 0 {
		t.Errorf("bare http page: grade %s score %d", s.Grade, s.Score)
	}
	if !slices.ContainsFunc(s.Issues, func(i string) bool { return strings.Contains(i, "cookie PHPSESSID lacks Secure, HttpOnly, SameSite") }) {
		t.Errorf("cookie issue missing: %q", s.Issues)
	}

	// https with a short HSTS, report-only CSP, XFO, active mixed content.
	h := http.Header{}
	h.Set("Strict-Transport-Security", "max-age=3600")
	h.Set("Content-Security-Policy-Report-Only", "default-src 'self'")
	h.Set("X-Frame-Options", "sameorigin")
	h.Set("Referrer-Policy", "unsafe-url")
	s = Grade(Page{HTTPS: true, Header: h, Markup: Markup{Active: []string{"http://x/a.js"}}})
	// 20 https + 0 redirect (unknown) + 8 hsts + 3 csp + 10 xfo + 0 + 0 + 0 + 5 cookies (none) + 0 mixed
	if s.Score != 46 || s.Grade != "D" {
		t.Errorf("mixed page: grade %s score %d findings %+v", s.Grade, s.Score, s.Findings)
	}
	find := func(check string) job.Finding {
		for _, f := range s.Findings {
			if f.Check == check {
				return f
			}
		}
		t.Fatalf("no %s finding", check)
		return job.Finding{}
	}
	if f := find("hsts"); f.Result != "partial" {
		t.Errorf("hsts %+v", f)
	}
	if f := find("referrer_policy"); f.Result != "fail" || f.Value != "unsafe-url" {
		t.Errorf("referrer %+v", f)
	}
	if f := find("mixed_content"); f.Result != "fail" || f.Value != "http://x/a.js" {
		t.Errorf("mixed %+v", f)
	}
	if f := find("https_redirect"); f.Result != "fail" || f.Detail == "" {
		t.Errorf("redirect %+v", f)
	}
}
