// Package sitemap holds the result of a site crawl (contract §4) and writes
// the sitemaps.org XML of its indexable pages. The sitemapper produces the
// result; ingest stores it and serves the XML from it, so both sides share
// these types.
package sitemap

import (
	"mime"
	"strings"
	"time"
)

// Source says how the crawler first reached a page.
type Source string

const (
	FromStart   Source = "start"   // the job's URL
	FromLink    Source = "link"    // a link on a crawled page
	FromSitemap Source = "sitemap" // only a sitemap lists it (an orphan)
)

// Page is one fetched URL. The first seven fields are the contract's; the
// rest are what an SEO crawler's user looks for when a page is missing from
// the XML.
type Page struct {
	URL         string `json:"url"`
	Status      int    `json:"status"` // HTTP status; 0 when no response came
	Title       string `json:"title"`
	Depth       int    `json:"depth"` // links followed from the start URL; 1 for a sitemap-only page
	ContentType string `json:"content_type"`
	LastMod     string `json:"lastmod"` // W3C datetime from a sitemap or Last-Modified, or ""
	Source      Source `json:"source"`

	Indexable      bool   `json:"indexable"`                 // listed in the XML
	Noindex        bool   `json:"noindex"`                   // meta robots or X-Robots-Tag
	Nofollow       bool   `json:"nofollow"`                  // its links were not followed
	Canonical      string `json:"canonical,omitempty"`       // rel=canonical target, normalized
	RedirectedFrom string `json:"redirected_from,omitempty"` // first URL of the redirect chain that led here
	BodyTruncated  bool   `json:"body_truncated,omitempty"`  // only the first body-limit bytes were read
	Error          string `json:"error,omitempty"`           // why the fetch failed
}

// IsIndexable reports whether the page belongs in a sitemap: a 2xx HTML
// response that is not noindex and is canonical to itself.
func (p *Page) IsIndexable() bool {
	return p.Status >= 200 && p.Status < 300 && p.Error == "" && IsHTML(p.ContentType) &&
		!p.Noindex && (p.Canonical == "" || p.Canonical == p.URL)
}

// IsHTML reports whether a Content-Type value names an HTML document.
func IsHTML(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt = strings.ToLower(strings.TrimSpace(strings.SplitN(contentType, ";", 2)[0]))
	}
	return mt == "text/html" || mt == "application/xhtml+xml"
}

// Excluded counts URLs kept out of the XML, by reason. Robots, OutOfScope
// and Traps count distinct URLs that were never fetched; the others count
// fetched URLs.
type Excluded struct {
	Robots        int `json:"robots"`        // disallowed by robots.txt
	Noindex       int `json:"noindex"`       // meta robots / X-Robots-Tag noindex
	OutOfScope    int `json:"out_of_scope"`  // another origin, also as a redirect target
	Errors        int `json:"errors"`        // 4xx, 5xx, timeouts, broken redirect chains
	NonHTML       int `json:"non_html"`      // PDFs, images and other non-HTML responses
	Canonicalized int `json:"canonicalized"` // rel=canonical points to another URL
	Redirects     int `json:"redirects"`     // redirect sources (their targets are listed)
	Traps         int `json:"traps"`         // too deep, too long, repeating paths, growing queries
}

// Robots describes the start origin's robots.txt.
type Robots struct {
	Found    bool     `json:"found"`
	Sitemaps []string `json:"sitemaps"`
	Status   int      `json:"status,omitempty"` // HTTP status of the fetch
	Error    string   `json:"error,omitempty"`  // why it could not be read, and what that meant
}

// Result is the sitemap job's result document.
type Result struct {
	Pages     []Page   `json:"pages"`
	PageCount int      `json:"page_count"`
	Truncated bool     `json:"truncated"` // max_pages was reached with URLs left to fetch
	TimedOut  bool     `json:"timed_out"` // the job time budget ended the crawl
	Excluded  Excluded `json:"excluded"`
	RobotsTxt Robots   `json:"robots_txt"`
}

// lastModLayouts are the W3C datetime forms sitemaps use, most precise first.
var lastModLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04Z07:00",
	"2006-01-02",
	"2006-01",
	"2006",
}

// NormalizeLastMod returns s as a W3C datetime (RFC 3339 to the second, or
// the date alone when s has no time), or "" when s is not one.
func NormalizeLastMod(s string) string {
	s = strings.TrimSpace(s)
	for i, layout := range lastModLayouts {
		t, err := time.Parse(layout, s)
		if err != nil {
			continue
		}
		if i < 2 {
			return t.Format(time.RFC3339)
		}
		return s
	}
	return ""
}
