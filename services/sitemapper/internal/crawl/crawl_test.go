package crawl

import (
	"bytes"
	"compress/gzip"
	"encoding/xml"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/surveyor/surveyor/pkg/job"
	"github.com/surveyor/surveyor/pkg/sitemap"
)

func page(w http.ResponseWriter, title, body string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(w, "<!doctype html><html><head><title>%s</title></head><body>%s</body></html>", title, body)
}

func gz(s string) []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write([]byte(s))
	zw.Close()
	return b.Bytes()
}

// bigSite is the test site: a link graph with orphans reachable
// only through a sitemap index with a gzipped child, robots rules with
// wildcards, noindex, canonical and nofollow, an infinite calendar, session
// ids, a redirect loop, an off-site redirect, mixed-case hosts and default
// ports, a 404, a 500, a page that never finishes, a 20 MB page, PDF and
// image links, mailto: and javascript: links.
func bigSite() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.EqualFold(r.Host, "other.test") {
			page(w, "Elsewhere", "")
			return
		}
		p := r.URL.Path
		switch {
		case p == "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nDisallow: /private/\nDisallow: /*.cgi$\nDisallow: /*?print=\nAllow: /private/public-note\n\n"+
				"User-agent: badbot\nDisallow: /\n\nSitemap: http://example.com/sitemap_index.xml\n")
		case p == "/sitemap_index.xml":
			w.Header().Set("Content-Type", "application/xml")
			fmt.Fprint(w, `<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<sitemap><loc>http://example.com/sitemap-pages.xml.gz</loc></sitemap>
<sitemap><loc>http://example.com/sitemap-extra.xml</loc></sitemap></sitemapindex>`)
		case p == "/sitemap-pages.xml.gz":
			w.Header().Set("Content-Type", "application/gzip")
			w.Write(gz(`<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<url><loc>http://example.com/orphan-1</loc><lastmod>2024-02-03</lastmod></url>
<url><loc>http://example.com/orphan-2</loc></url>
<url><loc>http://example.com/about</loc><lastmod>2023-12-01T10:00:00Z</lastmod></url>
<url><loc>http://other.test/listed-elsewhere</loc></url>
<url><loc>http://example.com/private/in-sitemap</loc></url></urlset>`))
		case p == "/sitemap-extra.xml":
			fmt.Fprint(w, `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>http://example.com/orphan-3?b=2&amp;a=1</loc></url></urlset>`)
		case p == "/":
			page(w, "Home", `
<a href="/about">About</a> <a href="HTTP://EXAMPLE.COM:80/about">again</a> <a href="http://Example.com/about#team">team</a> <a href="/./x/../about">dots</a>
<a href="/blog/">Blog</a> <a href="/private/secret">secret</a> <a href="/private/public-note">note</a>
<a href="/run.cgi">cgi</a> <a href="/list?print=1">print</a> <a href="/list?sort=1">sorted</a>
<a href="/noindex-meta">n1</a> <a href="/noindex-header">n2</a> <a href="/canonical-elsewhere">c1</a> <a href="/canonical-self">c2</a>
<a href="/nofollow-page">nf</a> <a rel="nofollow" href="/nofollowed-link">x</a>
<a href="/calendar?month=2024-01">calendar</a>
<a href="/session?PHPSESSID=abc1">s1</a> <a href="/session?PHPSESSID=xyz2">s2</a>
<a href="/loop-a">loop</a> <a href="/offsite">off</a> <a href="/moved">moved</a>
<a href="http://www.example.com/www-page">www</a>
<a href="/missing">404</a> <a href="/broken">500</a> <a href="/slow">slow</a> <a href="/huge">huge</a>
<a href="/doc.pdf">pdf</a> <a href="/photo.png">png</a> <img src="/img-only.png">
<a href="mailto:info@example.com">mail</a> <a href="javascript:alert(1)">js</a> <a href="tel:+100">tel</a>
<map><area href="/area-target"></map> <iframe src="/frame"></iframe> <link rel="next" href="/page-2">
<a href="/refresh">refresh</a> <a href="http://127.0.0.1/ip-alias">ip</a> <a href="http://example.com:8081/other-port">port</a>
<a href="/loopdir/">loopdir</a> <a href="/grow?a=1">grow</a>`)
		case p == "/about":
			page(w, "About", `<a href="/">home</a>`)
		case p == "/blog/":
			page(w, "Blog", `<a href="post-1">1</a> <a href="./post-2">2</a> <a href="../blog/post-1">1 again</a>`)
		case strings.HasPrefix(p, "/blog/post-"):
			page(w, "Post", `<a href="/blog/">blog</a>`)
		case p == "/noindex-meta":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<html><head><meta name="robots" content="noindex"><title>NI</title></head><body><a href="/from-noindex">x</a></body></html>`)
		case p == "/noindex-header":
			w.Header().Set("X-Robots-Tag", "noindex")
			page(w, "NH", "")
		case p == "/canonical-elsewhere":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<html><head><link rel="canonical" href="http://example.com/about"></head></html>`)
		case p == "/canonical-self":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<html><head><link rel="canonical" href="HTTP://example.COM/canonical-self#top"></head></html>`)
		case p == "/nofollow-page":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<html><head><meta name="robots" content="nofollow"></head><body><a href="/only-via-nofollow">x</a></body></html>`)
		case p == "/calendar":
			t, err := time.Parse("2006-01", r.URL.Query().Get("month"))
			if err != nil {
				http.NotFound(w, r)
				return
			}
			page(w, "Calendar", fmt.Sprintf(`<a href="?month=%s">prev</a> <a href="?month=%s">next</a>`,
				t.AddDate(0, -1, 0).Format("2006-01"), t.AddDate(0, 1, 0).Format("2006-01")))
		case p == "/session":
			page(w, "Session", fmt.Sprintf(`<a href="/session?PHPSESSID=%d">again</a>`, time.Now().UnixNano()))
		case p == "/loop-a":
			http.Redirect(w, r, "/loop-b", http.StatusFound)
		case p == "/loop-b":
			http.Redirect(w, r, "http://EXAMPLE.com:80/loop-a", http.StatusFound)
		case p == "/offsite":
			http.Redirect(w, r, "http://other.test/landing", http.StatusMovedPermanently)
		case p == "/moved":
			http.Redirect(w, r, "/moved-here", http.StatusMovedPermanently)
		case p == "/missing":
			http.NotFound(w, r)
		case p == "/broken":
			http.Error(w, "boom", http.StatusInternalServerError)
		case p == "/slow":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<html><head><title>Slow")
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		case p == "/huge":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<html><head><title>Huge</title></head><body><a href="/early-link">early</a>`)
			filler := strings.Repeat("<p>filler text to make the page big</p>\n", 1000)
			for sent := 0; sent < 20<<20; sent += len(filler) {
				if _, err := fmt.Fprint(w, filler); err != nil {
					return
				}
			}
			fmt.Fprint(w, `<a href="/after-huge">late</a></body></html>`)
		case p == "/doc.pdf":
			w.Header().Set("Content-Type", "application/pdf")
			w.Write([]byte("%PDF-1.4 not really"))
		case p == "/photo.png":
			w.Header().Set("Content-Type", "image/png")
			w.Write([]byte("\x89PNG\r\n\x1a\n"))
		case p == "/refresh":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<html><head><meta http-equiv="refresh" content="0; url=/refreshed"></head></html>`)
		case strings.HasPrefix(p, "/loopdir/"):
			page(w, "Dir", `<a href="loopdir/">deeper</a>`)
		case p == "/grow":
			page(w, "Grow", `<a href="?`+r.URL.RawQuery+`&a=1">more</a>`)
		case p == "/sitemap.xml", p == "/other-port", p == "/ip-alias", p == "/img-only.png":
			http.NotFound(w, r)
		default:
			page(w, strings.Trim(p, "/"), "")
		}
	})
}

func TestCrawlBigSite(t *testing.T) {
	cfg := testConfig()
	cfg.MaxDepth = 6
	cfg.BodyLimit = 256 << 10
	cfg.Timeout = 1500 * time.Millisecond // the slow page's wait; generous for loaded machines
	e := newEnv(t, bigSite(), cfg, false)
	res, prog, err := e.crawl("http://Example.com:80", 500)
	if err != nil {
		t.Fatal(err)
	}
	pages := byURL(res)
	if len(pages) != len(res.Pages) || res.PageCount != len(res.Pages) {
		t.Fatalf("%d pages, %d distinct URLs, page_count %d", len(res.Pages), len(pages), res.PageCount)
	}
	const s = "http://example.com"
	want := func(url string, status int, source job.Source, indexable bool) job.SitemapPage {
		t.Helper()
		p, ok := pages[url]
		if !ok {
			t.Errorf("%s not listed", url)
			return p
		}
		if p.Status != status || p.Source != source || p.Indexable != indexable {
			t.Errorf("%s: status %d source %s indexable %v, want %d %s %v (%+v)", url, p.Status, p.Source, p.Indexable, status, source, indexable, p)
		}
		return p
	}
	notListed := func(urls ...string) {
		t.Helper()
		for _, u := range urls {
			if _, ok := pages[u]; ok {
				t.Errorf("%s is listed", u)
			}
		}
	}
	notFetched := func(hostPaths ...string) {
		t.Helper()
		for _, hp := range hostPaths {
			if n := e.hits.prefixed(hp); n != 0 {
				t.Errorf("%s fetched %d times", hp, n)
			}
		}
	}

	home := want(s+"/", 200, job.FromStart, true)
	if home.Title != "Home" || home.Depth != 0 {
		t.Errorf("home = %+v", home)
	}
	// Mixed case, :80, #fragments and dot segments are one page, fetched once.
	about := want(s+"/about", 200, job.FromLink, true)
	if about.Depth != 1 || about.LastMod != "2023-12-01T10:00:00Z" {
		t.Errorf("about: depth %d lastmod %q, want 1 and the sitemap's", about.Depth, about.LastMod)
	}
	if n := e.hits.get("example.com/about"); n != 1 {
		t.Errorf("/about fetched %d times", n)
	}
	want(s+"/blog/post-1", 200, job.FromLink, true)
	want(s+"/blog/post-2", 200, job.FromLink, true)
	if n := e.hits.get("example.com/blog/post-1"); n != 1 {
		t.Errorf("/blog/post-1 fetched %d times", n)
	}

	// Orphans come from the sitemap index and its gzipped child.
	o1 := want(s+"/orphan-1", 200, job.FromSitemap, true)
	if o1.LastMod != "2024-02-03" {
		t.Errorf("orphan-1 lastmod %q", o1.LastMod)
	}
	want(s+"/orphan-2", 200, job.FromSitemap, true)
	want(s+"/orphan-3?b=2&a=1", 200, job.FromSitemap, true)

	// robots.txt: wildcards, $ and Allow; a sitemap entry is no exception.
	want(s+"/private/public-note", 200, job.FromLink, true)
	notFetched("example.com/private/secret", "example.com/private/in-sitemap", "example.com/run.cgi", "example.com/list?print=1")
	want(s+"/list?sort=1", 200, job.FromLink, true)
	if res.Excluded.Robots != 4 {
		t.Errorf("excluded.robots = %d, want 4", res.Excluded.Robots)
	}
	if !res.RobotsTxt.Found || len(res.RobotsTxt.Sitemaps) != 1 {
		t.Errorf("robots_txt = %+v", res.RobotsTxt)
	}

	// Directives.
	if p := want(s+"/noindex-meta", 200, job.FromLink, false); !p.Noindex {
		t.Errorf("noindex-meta not marked noindex")
	}
	want(s+"/from-noindex", 200, job.FromLink, true) // noindex still follows links
	if p := want(s+"/noindex-header", 200, job.FromLink, false); !p.Noindex {
		t.Errorf("noindex-header not marked noindex")
	}
	if p := want(s+"/canonical-elsewhere", 200, job.FromLink, false); p.Canonical != s+"/about" {
		t.Errorf("canonical = %q", p.Canonical)
	}
	want(s+"/canonical-self", 200, job.FromLink, true)
	if p := want(s+"/nofollow-page", 200, job.FromLink, true); !p.Nofollow {
		t.Errorf("nofollow-page not marked nofollow")
	}
	notFetched("example.com/only-via-nofollow", "example.com/nofollowed-link")

	// Other link kinds.
	for _, u := range []string{"/area-target", "/frame", "/page-2", "/refreshed"} {
		want(s+u, 200, job.FromLink, true)
	}

	// Traps end.
	calendar := e.hits.prefixed("example.com/calendar")
	if calendar == 0 || calendar > 2*cfg.MaxDepth {
		t.Errorf("calendar fetched %d times, want 1..%d", calendar, 2*cfg.MaxDepth)
	}
	if n := e.hits.prefixed("example.com/session"); n != 1 {
		t.Errorf("session page fetched %d times, want once", n)
	}
	want(s+"/session", 200, job.FromLink, true)
	if n := e.hits.prefixed("example.com/loopdir/"); n < 1 || n > maxSegRepeats {
		t.Errorf("loopdir fetched %d times", n)
	}
	if n := e.hits.prefixed("example.com/grow"); n < 1 || n > maxKeyRepeats {
		t.Errorf("grow fetched %d times", n)
	}
	if res.Excluded.Traps == 0 {
		t.Error("no trap counted")
	}

	// Redirects: the target is listed, a loop is cut, off-site is not fetched.
	moved := want(s+"/moved-here", 200, job.FromLink, true)
	if moved.RedirectedFrom != s+"/moved" {
		t.Errorf("redirected_from = %q", moved.RedirectedFrom)
	}
	notListed(s+"/moved", s+"/loop-b", "http://other.test/landing")
	loop := want(s+"/loop-a", 302, job.FromLink, false)
	if loop.Error != "redirect loop" {
		t.Errorf("loop error %q", loop.Error)
	}
	if a, b := e.hits.get("example.com/loop-a"), e.hits.get("example.com/loop-b"); a != 1 || b != 1 {
		t.Errorf("loop fetched %d and %d times", a, b)
	}
	notFetched("other.test", "127.0.0.1", "example.com:8081")
	if res.Excluded.OutOfScope != 4 { // landing, listed-elsewhere, ip-alias, other-port
		t.Errorf("excluded.out_of_scope = %d, want 4", res.Excluded.OutOfScope)
	}
	if res.Excluded.Redirects != 3 {
		t.Errorf("excluded.redirects = %d, want 3", res.Excluded.Redirects)
	}

	// The www twin is the same site.
	want("http://www.example.com/www-page", 200, job.FromLink, true)

	// Errors are listed and counted.
	want(s+"/missing", 404, job.FromLink, false)
	want(s+"/broken", 500, job.FromLink, false)
	if p := want(s+"/slow", 200, job.FromLink, false); p.Error != "timeout" {
		t.Errorf("slow page error %q", p.Error)
	}
	if res.Excluded.Errors != 4 { // 404, 500, timeout, loop
		t.Errorf("excluded.errors = %d, want 4", res.Excluded.Errors)
	}

	// The 20 MB page is cut at the body limit; the links before are followed.
	if p := want(s+"/huge", 200, job.FromLink, true); !p.BodyTruncated {
		t.Error("huge page not marked truncated")
	}
	want(s+"/early-link", 200, job.FromLink, true)
	notFetched("example.com/after-huge")

	// Non-HTML is listed, not parsed, kept out of the XML; <img> is no link.
	if p := want(s+"/doc.pdf", 200, job.FromLink, false); p.ContentType != "application/pdf" {
		t.Errorf("pdf content type %q", p.ContentType)
	}
	want(s+"/photo.png", 200, job.FromLink, false)
	notFetched("example.com/img-only.png", "example.com/mailto", "example.com/javascript")
	if res.Excluded.NonHTML != 2 || res.Excluded.Noindex != 2 || res.Excluded.Canonicalized != 1 {
		t.Errorf("excluded = %+v", res.Excluded)
	}

	if res.Truncated || res.TimedOut {
		t.Errorf("truncated %v timed out %v", res.Truncated, res.TimedOut)
	}
	if prog.n == 0 || prog.last.PagesFetched != res.PageCount {
		t.Errorf("progress %+v after %d reports, want pages_fetched %d", prog.last, prog.n, res.PageCount)
	}

	// The XML holds exactly the indexable pages.
	var buf bytes.Buffer
	if err := sitemap.WriteXML(&buf, res.Pages); err != nil {
		t.Fatal(err)
	}
	var set struct {
		URLs []struct {
			Loc string `xml:"loc"`
		} `xml:"url"`
	}
	if err := xml.Unmarshal(buf.Bytes(), &set); err != nil {
		t.Fatal(err)
	}
	inXML := map[string]bool{}
	for _, u := range set.URLs {
		inXML[u.Loc] = true
	}
	for _, p := range res.Pages {
		if inXML[p.URL] != p.Indexable {
			t.Errorf("%s: in XML %v, indexable %v", p.URL, inXML[p.URL], p.Indexable)
		}
	}
	if !inXML[s+"/orphan-3?b=2&a=1"] || inXML[s+"/noindex-meta"] || inXML[s+"/doc.pdf"] {
		t.Errorf("XML has the wrong pages:\n%s", buf.Bytes())
	}
}

// linear serves /p/0 .. /p/n-1, each linking to the next ten.
func linear(n int, delay time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/p/") {
			http.NotFound(w, r)
			return
		}
		i, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/p/"))
		if err != nil || i < 0 || i >= n {
			http.NotFound(w, r)
			return
		}
		time.Sleep(delay)
		var b strings.Builder
		for k := i + 1; k <= i+10 && k < n; k++ {
			fmt.Fprintf(&b, `<a href="/p/%d">%d</a>`, k, k)
		}
		page(w, "p"+strconv.Itoa(i), b.String())
	})
}

func TestMaxPagesHonoured(t *testing.T) {
	e := newEnv(t, linear(200, 0), testConfig(), false)
	res := e.mustCrawl("http://example.com/p/0", 25)
	if res.PageCount != 25 || len(res.Pages) != 25 || !res.Truncated {
		t.Fatalf("page_count %d, %d pages, truncated %v", res.PageCount, len(res.Pages), res.Truncated)
	}
	if n := e.hits.prefixed("example.com/p/"); n != 25 {
		t.Fatalf("%d pages fetched, want 25", n)
	}
}

func TestSmallSiteNotTruncated(t *testing.T) {
	e := newEnv(t, linear(12, 0), testConfig(), false)
	res := e.mustCrawl("http://example.com/p/0", 100)
	if res.PageCount != 12 || res.Truncated {
		t.Fatalf("page_count %d truncated %v", res.PageCount, res.Truncated)
	}
	for _, p := range res.Pages {
		if p.Depth > 2 {
			t.Errorf("%s at depth %d: not breadth-first", p.URL, p.Depth)
		}
	}
}
