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

// A Ref is a URL that an element of a page points to, for the scanner's
// inspections (mixed content, mailto links), which read a page in the same
// pass as its evidence.
type Ref struct {
	// Tag is the element, lower-case: a, area, link (href); script,
	// iframe, frame, embed, img, audio, video, source, track (src);
	// object (data); form (action).
	Tag string
	URL string // the attribute's value as the tokenizer decodes it; never ""
	Rel string // link's rel attribute
}

// refAttr names the attribute that holds the URL of an element's Ref.
func refAttr(k tagKind) (attrKind, bool) {
	switch k {
	case tagA, tagArea, tagLink:
		return attrHref, true
	case tagObject:
		return attrData, true
	case tagForm:
		return attrAction, true
	case tagScript, tagIframe, tagFrame, tagEmbed, tagImg, tagAudio, tagVideo, tagSource, tagTrack:
		return attrSrc, true
	}
	return 0, false
}

// evidenceAttrs are the attributes ParseHTML reads for the evidence;
// refAttrs adds those a Ref reports.
var (
	evidenceAttrs = [tagCount]attrSet{
		tagMeta:   attrsOf(attrName, attrProperty, attrHTTPEquiv, attrContent),
		tagScript: attrsOf(attrSrc),
		tagLink:   attrsOf(attrHref),
		tagA:      attrsOf(attrHref),
	}
	refAttrs = func() [tagCount]attrSet {
		w := evidenceAttrs
		for k := range w {
			if a, ok := refAttr(tagKind(k)); ok {
				w[k] |= attrsOf(a)
			}
		}
		w[tagLink] |= attrsOf(attrRel)
		return w
	}()
)

// ParseHTML fills ev's HTML, Meta, Title, ScriptSrc, Scripts, CSS, Links
// and Text from body in one pass. It reads the tokens x/net/html's
// Tokenizer would, through a lexer that copies only what is kept.
func ParseHTML(body []byte, ev *Evidence) { ParseHTMLRefs(body, ev, nil) }

// ParseHTMLRefs is ParseHTML that also hands visit, in page order, the Ref
// of every start tag that has one. The Refs cover the whole body, past the
// bounds of the evidence: the Refs after the token cap come from the same
// pass, and a body longer than MaxHTMLBytes (which only a raised body
// limit lets through) is lexed a second time, whole, for its Refs.
// A nil visit costs nothing: the attributes only Refs need are not read.
func ParseHTMLRefs(body []byte, ev *Evidence, visit func(Ref)) {
	lx := lexer{b: body[:min(len(body), MaxHTMLBytes)]}
	if visit == nil || len(lx.b) == len(body) {
		parseEvidence(&lx, ev, visit)
	} else {
		parseEvidence(&lx, ev, nil)
		lx = lexer{b: body}
	}
	if visit != nil {
		refsFrom(&lx, visit)
	}
}

// refsFrom hands visit the Refs of the tokens lx has not read yet.
func refsFrom(lx *lexer, visit func(Ref)) {
	lx.want = &refAttrs
	for tt := lx.next(); tt != tokEOF; tt = lx.next() {
		if tt == tokStartTag || tt == tokSelfClosingTag {
			lx.ref(visit)
		}
	}
}

// ref hands visit the current start tag's Ref, if it has one.
func (l *lexer) ref(visit func(Ref)) {
	if a, ok := refAttr(l.tag); ok {
		if url := l.attrs.get(a); url != "" {
			visit(Ref{Tag: tagNames[l.tag], URL: url, Rel: l.attrs.get(attrRel)})
		}
	}
}

// parseEvidence fills ev from up to maxTokens tokens of the page lx
// reads, handing visit the Refs on the way when it is not nil. lx is left
// where it stopped.
func parseEvidence(lx *lexer, ev *Evidence, visit func(Ref)) {
	body := lx.b
	ev.HTML = string(body)
	if ev.Meta == nil {
		ev.Meta = map[string][]string{}
	}
	lx.want = &evidenceAttrs
	if visit != nil {
		lx.want = &refAttrs
	}
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
			attrs := &lx.attrs // as evidenceAttrs (or refAttrs) lists
			rawIn = 0
			switch a {
			case tagMeta:
				key := attrs.get(attrName)
				if key == "" {
					key = attrs.get(attrProperty)
				}
				if key == "" {
					key = attrs.get(attrHTTPEquiv)
				}
				if attrs.seen.has(attrContent) && key != "" && metaCount < maxMeta {
					key = strings.ToLower(key)
					ev.Meta[key] = append(ev.Meta[key], attrs.get(attrContent))
					metaCount++
				}
			case tagScript:
				if src := attrs.get(attrSrc); src != "" {
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
				if href := attrs.get(attrHref); href != "" && len(ev.Links) < maxLinks {
					ev.Links = append(ev.Links, href)
				}
			case tagTitle:
				inTitle = tt == tokStartTag && !hasTitle
			}
			if tt == tokStartTag && hidesText(a) {
				skipDepth++
			}
			if visit != nil {
				lx.ref(visit)
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
