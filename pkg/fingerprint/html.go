package fingerprint

import (
	"bytes"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Bounds on what ParseHTML keeps from one page, so a hostile page costs a
// bounded amount of memory and matching time.
const (
	MaxHTMLBytes   = 8 << 20 // body bytes parsed; the rest is ignored
	maxTokens      = 1 << 20
	maxMeta        = 256
	maxScriptSrc   = 512
	maxScripts     = 512
	maxScriptBytes = 512 << 10 // per inline script or style
	maxCSS         = 256
	maxLinks       = 4096
	maxTextBytes   = 1 << 20
	maxTitleBytes  = 1 << 10
)

// ParseHTML fills ev's HTML, Meta, Title, ScriptSrc, Scripts, CSS, Links
// and Text from body in one pass of the HTML tokenizer.
func ParseHTML(body []byte, ev *Evidence) {
	if len(body) > MaxHTMLBytes {
		body = body[:MaxHTMLBytes]
	}
	ev.HTML = string(body)
	if ev.Meta == nil {
		ev.Meta = map[string][]string{}
	}
	z := html.NewTokenizer(bytes.NewReader(body))
	var (
		text      strings.Builder
		inTitle   bool
		hasTitle  bool
		rawIn     atom.Atom // script or style whose body comes next
		skipDepth int       // inside head-only or invisible elements
		metaCount int
	)
	// Visible text is usually a good part of the page: size the buffer once
	// instead of growing it word by word.
	text.Grow(min(len(body)/2, maxTextBytes))
	for i := 0; i < maxTokens; i++ {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			ev.Text = strings.TrimSpace(text.String())
			return
		case html.StartTagToken, html.SelfClosingTagToken:
			a := tagAtom(z.Raw())
			var attrs tagAttrs
			switch a {
			case atom.Meta, atom.Script, atom.Link, atom.A:
				attrs.read(z)
			}
			rawIn = 0
			switch a {
			case atom.Meta:
				key := attrs.name
				if key == "" {
					key = attrs.property
				}
				if key == "" {
					key = attrs.httpEquiv
				}
				if attrs.hasContent && key != "" && metaCount < maxMeta {
					key = strings.ToLower(key)
					ev.Meta[key] = append(ev.Meta[key], attrs.content)
					metaCount++
				}
			case atom.Script:
				if src := attrs.src; src != "" {
					if len(ev.ScriptSrc) < maxScriptSrc {
						ev.ScriptSrc = append(ev.ScriptSrc, src)
					}
				} else if tt == html.StartTagToken {
					rawIn = atom.Script
				}
			case atom.Style:
				if tt == html.StartTagToken {
					rawIn = atom.Style
				}
			case atom.Link, atom.A:
				if href := attrs.href; href != "" && len(ev.Links) < maxLinks {
					ev.Links = append(ev.Links, href)
				}
			case atom.Title:
				inTitle = tt == html.StartTagToken && !hasTitle
			}
			if tt == html.StartTagToken && hidesText(a) {
				skipDepth++
			}
		case html.EndTagToken:
			a := tagAtom(z.Raw())
			if hidesText(a) && skipDepth > 0 {
				skipDepth--
			}
			if a == atom.Title {
				inTitle = false
			}
			rawIn = 0
		case html.TextToken:
			var raw []byte
			if rawIn == 0 && !inTitle && skipDepth == 0 {
				// Visible text: the raw bytes serve unless entities or
				// carriage returns need the tokenizer's converted copy.
				if raw = z.Raw(); bytes.IndexByte(raw, '&') >= 0 || bytes.IndexByte(raw, '\r') >= 0 {
					raw = z.Text()
				}
			} else {
				raw = z.Text()
			}
			switch {
			case rawIn == atom.Script:
				if len(ev.Scripts) < maxScripts {
					ev.Scripts = append(ev.Scripts, string(clip(raw, maxScriptBytes)))
				}
			case rawIn == atom.Style:
				if len(ev.CSS) < maxCSS {
					ev.CSS = append(ev.CSS, string(clip(raw, maxScriptBytes)))
				}
			case inTitle:
				ev.Title = strings.Join(strings.Fields(string(clip(raw, maxTitleBytes))), " ")
				hasTitle, inTitle = true, false
			case skipDepth == 0:
				appendText(&text, raw)
			}
			rawIn = 0
		}
	}
	ev.Text = strings.TrimSpace(text.String())
}

// hidesText: elements whose text is not visible page text.
func hidesText(a atom.Atom) bool {
	switch a {
	case atom.Script, atom.Style, atom.Noscript, atom.Template, atom.Title, atom.Textarea, atom.Svg:
		return true
	}
	return false
}

// tagAttrs holds the few attributes ParseHTML keeps; reading them into
// fields instead of a map keeps a page with thousands of links cheap.
type tagAttrs struct {
	name, property, httpEquiv, content, src, href string
	hasContent                                    bool
}

// read takes the first occurrence of each wanted attribute, as browsers do.
func (t *tagAttrs) read(z *html.Tokenizer) {
	var seen uint8
	for more := true; more; {
		var k, v []byte
		k, v, more = z.TagAttr()
		var dst *string
		var bit uint8
		switch string(k) { // no allocation: the compiler compares in place
		case "name":
			dst, bit = &t.name, 1
		case "property":
			dst, bit = &t.property, 2
		case "http-equiv":
			dst, bit = &t.httpEquiv, 4
		case "content":
			dst, bit = &t.content, 8
			if seen&bit == 0 {
				t.hasContent = true
			}
		case "src":
			dst, bit = &t.src, 16
		case "href":
			dst, bit = &t.href, 32
		default:
			continue
		}
		if seen&bit == 0 {
			*dst = string(v)
			seen |= bit
		}
	}
}

// tagAtom names the tag of a raw start or end tag. The tokenizer's TagName
// copies every name; the tags ParseHTML acts on are all short, so a name is
// lower-cased on the stack and anything longer is no tag of interest.
func tagAtom(raw []byte) atom.Atom {
	i := 1
	if len(raw) > 1 && raw[1] == '/' {
		i = 2
	}
	var buf [8]byte
	n := 0
	for ; i < len(raw); i++ {
		c := raw[i]
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '/' || c == '>' {
			break
		}
		if n == len(buf) {
			return 0
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[n] = c
		n++
	}
	return atom.Lookup(buf[:n])
}

// appendText adds raw with whitespace runs (Unicode spaces too, as
// bytes.Fields would) collapsed to one space, without allocating.
func appendText(b *strings.Builder, raw []byte) {
	start := -1
	for i := 0; i <= len(raw); {
		size, space := 1, true
		if i < len(raw) {
			space, size = spaceAt(raw[i:])
		}
		if !space {
			if start < 0 {
				start = i
			}
			i += size
			continue
		}
		if start >= 0 {
			word := raw[start:i]
			start = -1
			if b.Len()+len(word)+1 > maxTextBytes {
				return
			}
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.Write(word)
		}
		i += size
	}
}

// spaceAt reports whether p starts with a space and the length of its
// first character.
func spaceAt(p []byte) (bool, int) {
	if c := p[0]; c < utf8.RuneSelf {
		return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v', 1
	}
	r, size := utf8.DecodeRune(p)
	return unicode.IsSpace(r), size
}

func clip(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}
