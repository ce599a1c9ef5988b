// Package links reads what a crawler needs from an HTML page in one
// streaming pass: the links to follow, the title, the base URL, the
// canonical URL, a meta refresh target and the robots directives. It never
// builds a DOM, so a large page costs time, not memory.
package links

import (
	"bytes"
	"io"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
)

// Page is what Parse found. URLs are as written in the page; the caller
// resolves them against Base (or the page URL when Base is empty).
type Page struct {
	Title     string
	Base      string
	Canonical string
	Refresh   string   // target of <meta http-equiv=refresh>
	Links     []string // followable links, in document order
	Noindex   bool     // meta robots noindex (or none)
	Nofollow  bool     // meta robots nofollow (or none): Links is then empty
}

// maxTitle bounds the title kept from a page, in bytes.
const maxTitle = 1024

// Parse reads an HTML document from r. agent is the crawler's robots token
// (lower case): a <meta name=agent> counts like <meta name=robots>.
// maxLinks bounds len(Links). Read errors other than io.EOF are returned
// with what was found before them.
func Parse(r io.Reader, agent string, maxLinks int) (*Page, error) {
	p := &Page{}
	z := html.NewTokenizer(r)
	var inTitle, haveTitle bool
	svg := 0
	var title []byte
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			err := z.Err()
			if err == io.EOF {
				err = nil
			}
			p.finish(title)
			return p, err
		case html.TextToken:
			if inTitle {
				title = append(title, z.Text()...)
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			switch string(name) {
			case "title":
				if inTitle {
					inTitle, haveTitle = false, true
				}
			case "svg":
				if svg > 0 {
					svg--
				}
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			switch string(name) {
			case "title":
				inTitle = !haveTitle && svg == 0 && tt == html.StartTagToken
			case "svg":
				if tt == html.StartTagToken {
					svg++
				}
			case "a", "area", "link", "iframe", "frame", "base", "meta":
				if hasAttr {
					p.tag(string(name), attrs(z), agent, maxLinks)
				}
			}
		}
	}
}

// attrs collects the attributes the crawler reads, lower-cased names.
func attrs(z *html.Tokenizer) map[string]string {
	m := make(map[string]string, 4)
	for {
		k, v, more := z.TagAttr()
		switch string(k) {
		case "href", "src", "rel", "name", "content", "http-equiv":
			if _, seen := m[string(k)]; !seen {
				m[string(k)] = string(v)
			}
		}
		if !more {
			return m
		}
	}
}

func (p *Page) tag(name string, a map[string]string, agent string, maxLinks int) {
	switch name {
	case "a", "area":
		if !hasToken(a["rel"], "nofollow") {
			p.add(a["href"], maxLinks)
		}
	case "link":
		rel := a["rel"]
		if hasToken(rel, "canonical") && p.Canonical == "" {
			p.Canonical = strings.TrimSpace(a["href"])
		}
		if (hasToken(rel, "alternate") || hasToken(rel, "next") || hasToken(rel, "prev")) && !hasToken(rel, "nofollow") {
			p.add(a["href"], maxLinks)
		}
	case "iframe", "frame":
		p.add(a["src"], maxLinks)
	case "base":
		if p.Base == "" {
			p.Base = strings.TrimSpace(a["href"])
		}
	case "meta":
		if strings.EqualFold(a["http-equiv"], "refresh") && p.Refresh == "" {
			p.Refresh = refreshURL(a["content"])
		}
		if n := strings.ToLower(strings.TrimSpace(a["name"])); n == "robots" || (agent != "" && n == agent) {
			ni, nf := directives(a["content"])
			p.Noindex = p.Noindex || ni
			p.Nofollow = p.Nofollow || nf
		}
	}
}

func (p *Page) add(href string, maxLinks int) {
	href = strings.TrimSpace(href)
	if href == "" {
		return
	}
	if len(p.Links) >= maxLinks {
		return
	}
	p.Links = append(p.Links, href)
}

func (p *Page) finish(title []byte) {
	if p.Nofollow {
		p.Links = nil
	}
	title = bytes.Join(bytes.Fields(title), []byte(" "))
	if len(title) > maxTitle {
		title = title[:maxTitle]
		for len(title) > 0 && !utf8.Valid(title) {
			title = title[:len(title)-1]
		}
	}
	p.Title = string(title)
}

// hasToken reports whether the space-separated list contains tok, ignoring case.
func hasToken(list, tok string) bool {
	for _, f := range strings.Fields(list) {
		if strings.EqualFold(f, tok) {
			return true
		}
	}
	return false
}

// refreshURL returns the URL of a meta refresh content such as
// "5; url='/next'", or "" when it only reloads the page.
func refreshURL(content string) string {
	i := strings.IndexAny(content, ";,")
	if i < 0 {
		return ""
	}
	s := strings.TrimSpace(content[i+1:])
	if len(s) >= 3 && strings.EqualFold(s[:3], "url") {
		rest := strings.TrimSpace(s[3:])
		if strings.HasPrefix(rest, "=") {
			s = strings.TrimSpace(rest[1:])
		}
	}
	if len(s) > 0 && (s[0] == '\'' || s[0] == '"') {
		if j := strings.IndexByte(s[1:], s[0]); j >= 0 {
			s = s[1 : 1+j]
		} else {
			s = s[1:]
		}
	}
	return strings.TrimSpace(s)
}

// directives reads a robots directive list ("noindex, nofollow", "none").
func directives(content string) (noindex, nofollow bool) {
	for _, d := range strings.FieldsFunc(content, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
		switch strings.ToLower(d) {
		case "noindex":
			noindex = true
		case "nofollow":
			nofollow = true
		case "none":
			noindex, nofollow = true, true
		}
	}
	return noindex, nofollow
}

// XRobotsTag reads X-Robots-Tag header values. A directive list may start
// with a user agent ("googlebot: noindex"); such a list applies only when
// the agent is ours. Unavailable_after and other directives are ignored.
func XRobotsTag(values []string, agent string) (noindex, nofollow bool) {
	for _, v := range values {
		list := v
		if i := strings.IndexByte(v, ':'); i >= 0 {
			who := strings.ToLower(strings.TrimSpace(v[:i]))
			if !strings.ContainsAny(who, ", ") && !isDirective(who) {
				if who != agent {
					continue
				}
				list = v[i+1:]
			}
		}
		ni, nf := directives(list)
		noindex = noindex || ni
		nofollow = nofollow || nf
	}
	return noindex, nofollow
}

// isDirective tells a directive with a value ("max-snippet: 20") from a
// user agent prefix.
func isDirective(s string) bool {
	switch s {
	case "max-snippet", "max-image-preview", "max-video-preview", "unavailable_after":
		return true
	}
	return false
}
