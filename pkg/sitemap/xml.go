package sitemap

import (
	"bufio"
	"encoding/xml"
	"io"

	"github.com/surveyor/surveyor/pkg/job"
)

// The sitemaps.org protocol caps one file at 50,000 URLs and 50 MiB
// uncompressed.
const (
	MaxURLs  = 50_000
	MaxBytes = 50 << 20
)

const (
	xmlHead = xml.Header + `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n"
	xmlTail = "</urlset>\n"
)

// WriteXML writes a sitemaps.org urlset of the indexable pages, in order,
// with entity-escaped URLs and W3C lastmod dates. It stops before the file
// would pass MaxURLs entries or MaxBytes: the pages after that are left out
// (a caller that needs them must split the list into several files and an
// index). A Surveyor crawl fetches at most 10,000 pages, so its sitemap
// always fits one file.
func WriteXML(w io.Writer, pages []job.SitemapPage) error {
	bw := bufio.NewWriter(w)
	bw.WriteString(xmlHead)
	size, n := len(xmlHead)+len(xmlTail), 0
	var entry []byte
	for i := range pages {
		p := &pages[i]
		if !IsIndexable(p) {
			continue
		}
		entry = appendEntry(entry[:0], p)
		if n == MaxURLs || size+len(entry) > MaxBytes {
			break
		}
		bw.Write(entry)
		size += len(entry)
		n++
	}
	bw.WriteString(xmlTail)
	return bw.Flush()
}

// appendEntry appends one <url> element.
func appendEntry(b []byte, p *job.SitemapPage) []byte {
	b = append(b, "  <url><loc>"...)
	b = appendLoc(b, p.URL)
	b = append(b, "</loc>"...)
	if lm := NormalizeLastMod(p.LastMod); lm != "" {
		b = append(b, "<lastmod>"...)
		b = append(b, lm...)
		b = append(b, "</lastmod>"...)
	}
	return append(b, "</url>\n"...)
}

// appendLoc writes a URL the protocol accepts: bytes outside printable
// ASCII are percent-encoded and the five XML special characters escaped.
func appendLoc(b []byte, u string) []byte {
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(u); i++ {
		c := u[i]
		switch {
		case c <= ' ' || c >= 0x7f:
			b = append(b, '%', hex[c>>4], hex[c&15])
		case c == '&':
			b = append(b, "&amp;"...)
		case c == '<':
			b = append(b, "&lt;"...)
		case c == '>':
			b = append(b, "&gt;"...)
		case c == '\'':
			b = append(b, "&apos;"...)
		case c == '"':
			b = append(b, "&quot;"...)
		default:
			b = append(b, c)
		}
	}
	return b
}
