package job

// SitemapResult is the result document of a sitemap job (contract §4).
type SitemapResult struct {
	Pages     []SitemapPage `json:"pages"`
	PageCount int           `json:"page_count"`
	Truncated bool          `json:"truncated"` // max_pages was reached with URLs left to fetch
	TimedOut  bool          `json:"timed_out"` // the job time budget ended the crawl
	Excluded  Excluded      `json:"excluded"`
	RobotsTxt RobotsTxt     `json:"robots_txt"`
}

// SitemapPage is one fetched URL. The first seven fields are the
// contract's; the rest are what an SEO crawler's user looks for when a
// page is missing from the XML.
type SitemapPage struct {
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

// Source says how the crawler first reached a page.
type Source string

const (
	FromStart   Source = "start"   // the job's URL
	FromLink    Source = "link"    // a link on a crawled page
	FromSitemap Source = "sitemap" // only a sitemap lists it (an orphan)
)

// Enum lists the sources.
func (Source) Enum() []string { return enum([]Source{FromStart, FromLink, FromSitemap}) }

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

// RobotsTxt describes the start origin's robots.txt.
type RobotsTxt struct {
	Found    bool     `json:"found"`
	Sitemaps []string `json:"sitemaps"`
	Status   int      `json:"status,omitempty"` // HTTP status of the fetch
	Error    string   `json:"error,omitempty"`  // why it could not be read, and what that meant
}

// SitemapProgress is a running sitemap job's progress document.
type SitemapProgress struct {
	PagesFetched int `json:"pages_fetched"`
	Queued       int `json:"queued"` // URLs found and not fetched yet
}
