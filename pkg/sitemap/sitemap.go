// Package sitemap writes the sitemaps.org XML of a crawl's indexable pages
// and holds the rules it needs (which pages are indexable, lastmod dates).
// The sitemapper marks the pages of its job.SitemapResult with them;
// ingest serves the XML from that result.
package sitemap

import (
	"mime"
	"strings"
	"time"

	"github.com/surveyor/surveyor/pkg/job"
)

// IsIndexable reports whether the page belongs in a sitemap: a 2xx HTML
// response that is not noindex and is canonical to itself.
func IsIndexable(p *job.SitemapPage) bool {
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
