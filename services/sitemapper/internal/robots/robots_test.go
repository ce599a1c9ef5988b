package robots

import (
	"errors"
	"testing"
	"time"
)

const agent = "surveyorbot"

const file = `# comments are fine
Disallow: /before-any-group
Sitemap: http://site.test/sitemap_index.xml

User-agent: *
Disallow: /private/
Disallow: /*.pdf$
Disallow: /*?sort=
Allow: /private/open
Crawl-delay: soon

User-agent: SurveyorBot
Disallow: /private/
Disallow: /*.pdf$
Disallow: /*?sort=
Disallow: /bot-only
Allow: /private/open
Crawl-delay: 0.5

User-agent: otherbot
Disallow: /
Sitemap: http://site.test/other.xml
`

func TestPolicyRules(t *testing.T) {
	p := New(200, []byte(file), nil, agent)
	if !p.Found || p.Err != "" {
		t.Fatalf("found %v err %q", p.Found, p.Err)
	}
	if p.CrawlDelay != 500*time.Millisecond {
		t.Errorf("crawl delay %v", p.CrawlDelay)
	}
	if len(p.Sitemaps) != 2 {
		t.Errorf("sitemaps %q", p.Sitemaps)
	}
	for uri, want := range map[string]bool{
		"/":                    true,
		"/before-any-group":    true,
		"/private/x":           false,
		"/private/open":        true,
		"/private/open/deeper": true,
		"/doc.pdf":             false,
		"/doc.pdf?x=1":         true,
		"/list?sort=asc":       false,
		"/list?page=2":         true,
		"/bot-only":            false,
	} {
		if got := p.Allowed(uri); got != want {
			t.Errorf("Allowed(%q) = %v, want %v", uri, got, want)
		}
	}
}

func TestPolicyFallsBackToStar(t *testing.T) {
	p := New(200, []byte("User-agent: *\nDisallow: /x\n\nUser-agent: otherbot\nDisallow: /\n"), nil, agent)
	if p.Allowed("/x/1") || !p.Allowed("/y") {
		t.Fatal("the * group was not applied")
	}
}

func TestPolicyOutcomes(t *testing.T) {
	cases := []struct {
		name    string
		status  int
		err     error
		allowed bool
		found   bool
	}{
		{"missing", 404, nil, true, false},
		{"forbidden", 403, nil, true, false},
		{"redirected too often", 301, nil, true, false},
		{"server error", 500, nil, false, false},
		{"unavailable", 503, nil, false, false},
		{"rate limited", 429, nil, false, false},
		{"timeout", 0, errors.New("timeout"), false, false},
		{"empty file", 200, nil, true, true},
	}
	for _, c := range cases {
		p := New(c.status, nil, c.err, agent)
		if p.Allowed("/page") != c.allowed || p.Found != c.found {
			t.Errorf("%s: allowed %v found %v", c.name, p.Allowed("/page"), p.Found)
		}
		if !c.allowed && p.Err == "" {
			t.Errorf("%s: a closed origin must say why", c.name)
		}
	}
}
