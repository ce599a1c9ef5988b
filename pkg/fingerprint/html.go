package fingerprint

import (
	"bytes"
	"strings"
	"unicode"
	"unicode/utf8"
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
// and Text from body in one pass. It reads the tokens x/net/html's
// Tokenizer would, through a lexer that copies only what is kept.
func ParseHTML(body []byte, ev *Evidence) {
	if len(body) > MaxHTMLBytes {
		body = body[:MaxHTMLBytes]
	}
	ev.HTML = string(body)
	if ev.Meta == nil {
		ev.Meta = map[string][]string{}
	}
	lx := lexer{b: body}
	var (
		text      strings.Builder
		inTitle   bool
		hasTitle  bool
		rawIn     tagKind // script or style whose body comes next
		skipDepth int     // inside head-only or invisible elements
		metaCount int
	)
	// Visible text is usually a good part of the page: size the buffer once
	// instead of growing it word by word.
	text.Grow(min(len(body)/2, maxTextBytes))
	for i := 0; i < maxTokens; i++ {
		tt := lx.next()
		switch tt {
		case tokEOF:
			ev.Text = strings.TrimSpace(text.String())
			return
		case tokStartTag, tokSelfClosingTag:
			a := lx.tag
			attrs := &lx.attrs // read for meta, script, link and a only
			rawIn = 0
			switch a {
			case tagMeta:
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
			case tagScript:
				if src := attrs.src; src != "" {
					if len(ev.ScriptSrc) < maxScriptSrc {
						ev.ScriptSrc = append(ev.ScriptSrc, src)
					}
				} else if tt == tokStartTag {
					rawIn = tagScript
				}
			case tagStyle:
				if tt == tokStartTag {
					rawIn = tagStyle
				}
			case tagLink, tagA:
				if href := attrs.href; href != "" && len(ev.Links) < maxLinks {
					ev.Links = append(ev.Links, href)
				}
			case tagTitle:
				inTitle = tt == tokStartTag && !hasTitle
			}
			if tt == tokStartTag && hidesText(a) {
				skipDepth++
			}
		case tokEndTag:
			a := lx.tag
			if hidesText(a) && skipDepth > 0 {
				skipDepth--
			}
			if a == tagTitle {
				inTitle = false
			}
			rawIn = 0
		case tokText:
			var raw []byte
			if rawIn == 0 && !inTitle && skipDepth == 0 {
				// Visible text: the raw bytes serve unless entities or
				// carriage returns need converting.
				if raw = lx.rawText(); bytes.IndexByte(raw, '&') >= 0 || bytes.IndexByte(raw, '\r') >= 0 {
					raw = lx.textBytes()
				}
			} else {
				raw = lx.textBytes()
			}
			switch {
			case rawIn == tagScript:
				if len(ev.Scripts) < maxScripts {
					ev.Scripts = append(ev.Scripts, string(clip(raw, maxScriptBytes)))
				}
			case rawIn == tagStyle:
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
func hidesText(a tagKind) bool {
	switch a {
	case tagScript, tagStyle, tagNoscript, tagTemplate, tagTitle, tagTextarea, tagSvg:
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
