package fingerprint

import (
	"bytes"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// parseHTMLOracle is ParseHTML as it was built on x/net/html's Tokenizer.
// It stays here, and only here, as the reference the lexer must match.
func parseHTMLOracle(body []byte, ev *Evidence) {
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
			a := oracleTagAtom(z.Raw())
			var attrs oracleTagAttrs
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
			if tt == html.StartTagToken && oracleHidesText(a) {
				skipDepth++
			}
		case html.EndTagToken:
			a := oracleTagAtom(z.Raw())
			if oracleHidesText(a) && skipDepth > 0 {
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

// oracleHidesText: elements whose text is not visible page text.
func oracleHidesText(a atom.Atom) bool {
	switch a {
	case atom.Script, atom.Style, atom.Noscript, atom.Template, atom.Title, atom.Textarea, atom.Svg:
		return true
	}
	return false
}

// oracleTagAttrs holds the few attributes ParseHTML keeps; reading them into
// fields instead of a map keeps a page with thousands of links cheap.
type oracleTagAttrs struct {
	name, property, httpEquiv, content, src, href string
	hasContent                                    bool
}

// read takes the first occurrence of each wanted attribute, as browsers do.
func (t *oracleTagAttrs) read(z *html.Tokenizer) {
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

// oracleTagAtom names the tag of a raw start or end tag. The tokenizer's TagName
// copies every name; the tags ParseHTML acts on are all short, so a name is
// lower-cased on the stack and anything longer is no tag of interest.
func oracleTagAtom(raw []byte) atom.Atom {
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

// oracleRefAttr names the attribute whose value is an element's Ref URL.
var oracleRefAttr = map[string]string{
	"a": "href", "area": "href", "link": "href", "object": "data", "form": "action",
	"script": "src", "iframe": "src", "frame": "src", "embed": "src", "img": "src",
	"audio": "src", "video": "src", "source": "src", "track": "src",
}

// refsOracle lists the Refs of the whole body as x/net/html's Tokenizer
// reads it: the first value of each attribute, no bounds.
func refsOracle(body []byte) []Ref {
	var refs []Ref
	z := html.NewTokenizer(bytes.NewReader(body))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return refs
		case html.StartTagToken, html.SelfClosingTagToken:
		default:
			continue
		}
		name, more := z.TagName()
		tag := string(name)
		urlAttr, ok := oracleRefAttr[tag]
		if !ok {
			continue
		}
		attrs := map[string]string{}
		for more {
			var k, v []byte
			k, v, more = z.TagAttr()
			if _, seen := attrs[string(k)]; !seen {
				attrs[string(k)] = string(v)
			}
		}
		if u := attrs[urlAttr]; u != "" {
			r := Ref{Tag: tag, URL: u}
			if tag == "link" {
				r.Rel = attrs["rel"]
			}
			refs = append(refs, r)
		}
	}
}
