package fingerprint

import (
	"bytes"
	"strings"

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
	for i := 0; i < maxTokens; i++ {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			ev.Text = strings.TrimSpace(text.String())
			return
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			a := atom.Lookup(name)
			var attrs map[string]string
			switch a {
			case atom.Meta, atom.Script, atom.Link, atom.A:
				attrs = readAttrs(z, hasAttr)
			}
			rawIn = 0
			switch a {
			case atom.Meta:
				key := attrs["name"]
				if key == "" {
					key = attrs["property"]
				}
				if key == "" {
					key = attrs["http-equiv"]
				}
				if content, ok := attrs["content"]; ok && key != "" && metaCount < maxMeta {
					key = strings.ToLower(key)
					ev.Meta[key] = append(ev.Meta[key], content)
					metaCount++
				}
			case atom.Script:
				if src := attrs["src"]; src != "" {
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
				if href := attrs["href"]; href != "" && len(ev.Links) < maxLinks {
					ev.Links = append(ev.Links, href)
				}
			case atom.Title:
				inTitle = tt == html.StartTagToken && !hasTitle
			}
			if tt == html.StartTagToken && hidesText(a) {
				skipDepth++
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			a := atom.Lookup(name)
			if hidesText(a) && skipDepth > 0 {
				skipDepth--
			}
			if a == atom.Title {
				inTitle = false
			}
			rawIn = 0
		case html.TextToken:
			raw := z.Text()
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

func readAttrs(z *html.Tokenizer, more bool) map[string]string {
	if !more {
		return nil
	}
	attrs := map[string]string{}
	for more {
		var k, v []byte
		k, v, more = z.TagAttr()
		if _, dup := attrs[string(k)]; !dup {
			attrs[string(k)] = string(v)
		}
	}
	return attrs
}

// appendText adds raw with whitespace runs collapsed to one space.
func appendText(b *strings.Builder, raw []byte) {
	for _, f := range bytes.Fields(raw) {
		if b.Len()+len(f)+1 > maxTextBytes {
			return
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.Write(f)
	}
}

func clip(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}
