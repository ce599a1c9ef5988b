// Package sitemaps reads sitemaps.org files as the crawler finds them: a
// urlset or a sitemap index, XML or plain text, gzipped or not. It streams,
// and stops at a size and entry limit, so a hostile sitemap costs bounded
// memory.
package sitemaps

import (
	"bufio"
	"compress/gzip"
	"encoding/xml"
	"errors"
	"io"
	"strings"
)

// MaxSize is the protocol's limit of one uncompressed sitemap file.
const MaxSize = 50 << 20

// Entry is a <url> or <sitemap> element.
type Entry struct {
	Loc     string
	LastMod string
}

// File is one parsed sitemap.
type File struct {
	Index   bool    // a sitemap index: Entries are sitemaps, not pages
	Entries []Entry // in file order
	Dropped int     // entries beyond the cap
}

// Read parses a sitemap from r, gunzipping it when it starts with the gzip
// magic (a .xml.gz served without Content-Encoding). At most maxEntries
// entries are kept and at most MaxSize uncompressed bytes read. A broken
// file returns what was read before the error along with it.
func Read(r io.Reader, maxEntries int) (*File, error) {
	br := bufio.NewReader(r)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		gz, err := gzip.NewReader(br)
		if err != nil {
			return &File{}, err
		}
		defer gz.Close()
		br = bufio.NewReader(gz)
	}
	body := bufio.NewReader(io.LimitReader(br, MaxSize))
	first, err := firstByte(body)
	if err == io.EOF {
		return &File{}, nil
	}
	if err != nil {
		return &File{}, err
	}
	if first == '<' {
		return readXML(body, maxEntries)
	}
	return readText(body, maxEntries)
}

// firstByte returns the first non-space byte without consuming it.
func firstByte(r *bufio.Reader) (byte, error) {
	for {
		b, err := r.ReadByte()
		if err != nil {
			return 0, err
		}
		if b == 0xef { // a UTF-8 byte order mark
			r.Discard(2)
			continue
		}
		if !strings.ContainsRune(" \t\r\n", rune(b)) {
			return b, r.UnreadByte()
		}
	}
}

func readXML(r io.Reader, maxEntries int) (*File, error) {
	f := &File{}
	d := xml.NewDecoder(r)
	d.Strict = false
	var cur *Entry
	var field *string
	var text strings.Builder
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return f, nil
		}
		if err != nil {
			return f, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "sitemapindex":
				f.Index = true
			case "url", "sitemap":
				cur = &Entry{}
			case "loc":
				if cur != nil {
					field = &cur.Loc
					text.Reset()
				}
			case "lastmod":
				if cur != nil {
					field = &cur.LastMod
					text.Reset()
				}
			}
		case xml.CharData:
			if field != nil && text.Len() < 4096 {
				text.Write(t)
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "loc", "lastmod":
				if field != nil {
					*field = strings.TrimSpace(text.String())
					field = nil
				}
			case "url", "sitemap":
				if cur != nil && cur.Loc != "" {
					f.add(*cur, maxEntries)
				}
				cur = nil
			}
		}
	}
}

// readText reads the protocol's plain-text form: one URL per line.
func readText(r io.Reader, maxEntries int) (*File, error) {
	f := &File{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 8192)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" {
			f.add(Entry{Loc: line}, maxEntries)
		}
	}
	if errors.Is(sc.Err(), bufio.ErrTooLong) {
		return f, errors.New("sitemaps: line too long in text sitemap")
	}
	return f, sc.Err()
}

func (f *File) add(e Entry, maxEntries int) {
	if len(f.Entries) >= maxEntries {
		f.Dropped++
		return
	}
	f.Entries = append(f.Entries, e)
}
