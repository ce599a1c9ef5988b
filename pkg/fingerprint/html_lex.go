package fingerprint

import (
	"bytes"
	"math/bits"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
)

// A lexer cuts a page into the tokens golang.org/x/net/html's Tokenizer
// would produce, with the same boundaries, but reads only the attributes
// its want table names and copies nothing else: skipping a tag or a text
// run is a scan over the body. Every rule below mirrors one of that
// tokenizer (which follows the WHATWG tokenizer with a few shortcuts of its
// own); the differential tests in html_lex_test.go hold the two together.
type lexer struct {
	b   []byte
	pos int
	// raw is the element whose raw text or RCDATA comes next: the
	// tokenizer switches mode after such a start tag, self-closing or not.
	raw tagKind
	// want names, per element, the attributes read from its start tags.
	want *[tagCount]attrSet

	// The current token.
	tag        tagKind
	attrs      tagAttrs
	start, end int // text span
	text       textKind
}

type tokKind uint8

const (
	tokEOF tokKind = iota
	tokText
	tokStartTag
	tokSelfClosingTag
	tokEndTag
	tokOther // comment, doctype, processing instruction, "</>"
)

// textKind says how a text token's bytes become its text.
type textKind uint8

const (
	textData   textKind = iota // entities decoded
	textRaw                    // script, style, ...: NUL replaced, no entities
	textRCDATA                 // title, textarea: NUL replaced and entities decoded
)

// tagKind names the elements that matter to ParseHTML, to its Refs or to
// the lexer's mode; every other element is tagOther.
type tagKind uint8

const (
	tagOther tagKind = iota
	tagA
	tagLink
	tagMeta
	tagScript
	tagStyle
	tagTitle
	tagTextarea
	tagNoscript
	tagTemplate
	tagSvg
	tagIframe
	tagNoembed
	tagNoframes
	tagPlaintext
	tagXmp
	tagArea
	tagFrame
	tagEmbed
	tagObject
	tagImg
	tagAudio
	tagVideo
	tagSource
	tagTrack
	tagForm
	tagCount
)

var tagNames = [tagCount]string{
	tagA: "a", tagLink: "link", tagMeta: "meta", tagScript: "script", tagStyle: "style",
	tagTitle: "title", tagTextarea: "textarea", tagNoscript: "noscript", tagTemplate: "template",
	tagSvg: "svg", tagIframe: "iframe", tagNoembed: "noembed", tagNoframes: "noframes",
	tagPlaintext: "plaintext", tagXmp: "xmp", tagArea: "area", tagFrame: "frame", tagEmbed: "embed",
	tagObject: "object", tagImg: "img", tagAudio: "audio", tagVideo: "video", tagSource: "source",
	tagTrack: "track", tagForm: "form",
}

// lookupTag names a tag, ASCII case-insensitively, without allocating.
func lookupTag(name []byte) tagKind {
	var buf [9]byte
	if len(name) > len(buf) {
		return tagOther
	}
	for i, c := range name {
		buf[i] = lowerASCII(c)
	}
	switch string(buf[:len(name)]) { // compared in place, no allocation
	case "a":
		return tagA
	case "link":
		return tagLink
	case "meta":
		return tagMeta
	case "script":
		return tagScript
	case "style":
		return tagStyle
	case "title":
		return tagTitle
	case "textarea":
		return tagTextarea
	case "noscript":
		return tagNoscript
	case "template":
		return tagTemplate
	case "svg":
		return tagSvg
	case "iframe":
		return tagIframe
	case "noembed":
		return tagNoembed
	case "noframes":
		return tagNoframes
	case "plaintext":
		return tagPlaintext
	case "xmp":
		return tagXmp
	case "area":
		return tagArea
	case "frame":
		return tagFrame
	case "embed":
		return tagEmbed
	case "object":
		return tagObject
	case "img":
		return tagImg
	case "audio":
		return tagAudio
	case "video":
		return tagVideo
	case "source":
		return tagSource
	case "track":
		return tagTrack
	case "form":
		return tagForm
	}
	return tagOther
}

// attrKind names the attributes the lexer can read; attrSet is a set of
// them.
type attrKind uint8

const (
	attrName attrKind = iota
	attrProperty
	attrHTTPEquiv
	attrContent
	attrSrc
	attrHref
	attrRel
	attrData
	attrAction
	attrCount
)

var attrNames = [attrCount]string{
	attrName: "name", attrProperty: "property", attrHTTPEquiv: "http-equiv", attrContent: "content",
	attrSrc: "src", attrHref: "href", attrRel: "rel", attrData: "data", attrAction: "action",
}

type attrSet uint16

func attrsOf(list ...attrKind) attrSet {
	var s attrSet
	for _, a := range list {
		s |= 1 << a
	}
	return s
}

func (s attrSet) has(a attrKind) bool { return s&(1<<a) != 0 }

// tagAttrs holds the attributes read from the current start tag; reading
// them into an array instead of a map keeps a page with thousands of links
// cheap.
type tagAttrs struct {
	val  [attrCount]string
	seen attrSet // which of val the tag has; the rest are stale
}

// get is the attribute's value, "" when the tag has none (or it was not
// wanted).
func (t *tagAttrs) get(a attrKind) string {
	if t.seen.has(a) {
		return t.val[a]
	}
	return ""
}

// rawContent reports whether the element's content is raw text or RCDATA
// to the tokenizer, which assumes scripting is on (so noscript is raw).
func rawContent(k tagKind) bool {
	switch k {
	case tagScript, tagStyle, tagTitle, tagTextarea, tagNoscript, tagIframe, tagNoembed, tagNoframes, tagPlaintext, tagXmp:
		return true
	}
	return false
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// isTagSpace: the whitespace of tags (the tokenizer's set, no \v).
func isTagSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f' }

func skipTagSpace(b []byte, j int) int {
	for j < len(b) && isTagSpace(b[j]) {
		j++
	}
	return j
}

// next reads the next token; tokEOF ends the page, including a tag cut off
// by the end of input (the tokenizer reports an error there).
func (l *lexer) next() tokKind {
	b := l.b
	if k := l.raw; k != tagOther {
		l.raw = tagOther
		from := l.pos
		var to int
		switch k {
		case tagPlaintext:
			to = len(b)
		case tagScript:
			to = scriptEnd(b, from)
		default:
			to = rawEnd(b, from, tagNames[k])
		}
		if to > from {
			l.pos, l.start, l.end = to, from, to
			l.text = textRaw
			if k == tagTitle || k == tagTextarea {
				l.text = textRCDATA
			}
			return tokText
		}
	}
	start := l.pos
	for i := start; ; {
		k := bytes.IndexByte(b[i:], '<')
		if k < 0 || i+k+1 >= len(b) {
			break // a '<' at the very end is text
		}
		lt := i + k
		c := b[lt+1]
		if !isLetter(c) && c != '/' && c != '!' && c != '?' {
			i = lt + 1
			continue
		}
		if lt > start {
			l.pos, l.start, l.end, l.text = lt, start, lt, textData
			return tokText
		}
		return l.markup(lt, c)
	}
	if start < len(b) {
		l.pos, l.start, l.end, l.text = len(b), start, len(b), textData
		return tokText
	}
	return tokEOF
}

// markup reads what starts at b[lt] == '<' followed by c.
func (l *lexer) markup(lt int, c byte) tokKind {
	b := l.b
	n := len(b)
	switch {
	case isLetter(c):
		return l.tagAt(lt+1, true)
	case c == '/':
		if lt+2 >= n { // "</" at the end is text
			l.pos, l.start, l.end, l.text = n, lt, n, textData
			return tokText
		}
		switch c2 := b[lt+2]; {
		case c2 == '>':
			l.pos = lt + 3
			return tokOther
		case isLetter(c2):
			return l.tagAt(lt+2, false)
		}
		l.pos = closeAngle(b, lt+2)
		return tokOther
	case c == '!':
		switch {
		case lt+3 >= n:
			l.pos = n
		case b[lt+2] == '-' && b[lt+3] == '-':
			l.pos = commentEnd(b, lt+4)
		default: // doctype or bogus comment
			l.pos = closeAngle(b, lt+2)
		}
		return tokOther
	}
	l.pos = closeAngle(b, lt+1) // "<?"
	return tokOther
}

// closeAngle returns the position after the first '>' at or after j, or
// the end of input.
func closeAngle(b []byte, j int) int {
	if k := bytes.IndexByte(b[j:], '>'); k >= 0 {
		return j + k + 1
	}
	return len(b)
}

// commentEnd finds the end of a comment whose text starts at j: "-->",
// "--!>", or '>' right after the opening "<!--" plus dashes.
func commentEnd(b []byte, j int) int {
	dashes, beginning := 0, true
	for ; j < len(b); j++ {
		switch b[j] {
		case '-':
			dashes++
			continue
		case '>':
			if dashes >= 2 || beginning {
				return j + 1
			}
		case '!':
			if dashes >= 2 {
				if j+1 >= len(b) {
					return len(b)
				}
				j++
				if b[j] == '>' {
					return j + 1
				}
				if b[j] == '-' {
					dashes, beginning = 1, false
					continue
				}
			}
		}
		dashes, beginning = 0, false
	}
	return len(b)
}

// tagAt reads a start or end tag whose name starts at b[j].
func (l *lexer) tagAt(j int, start bool) tokKind {
	b := l.b
	n := len(b)
	nameStart := j
	for j++; j < n && b[j] != '/' && b[j] != '>' && !isTagSpace(b[j]); j++ {
	}
	l.tag = lookupTag(b[nameStart:j])
	var want attrSet
	if start {
		want = l.want[l.tag]
		l.attrs.seen = 0
	}
	attrsFrom := skipTagSpace(b, j)
	j = attrsFrom
	var last attrSpan
	named := 0
	for {
		if j >= n {
			l.pos = n
			return tokEOF
		}
		if b[j] == '>' {
			j++
			break
		}
		a, next, ok := attrAt(b, j)
		if !ok {
			l.pos = n
			return tokEOF
		}
		if a.ks != a.ke {
			named++
			last = a
			if want != 0 {
				l.attrs.take(b, a, want)
			}
		}
		j = skipTagSpace(b, next)
	}
	l.pos = j
	if !start {
		return tokEndTag
	}
	if rawContent(l.tag) {
		l.raw = l.tag
	}
	// A '/' before '>' closes the tag unless it ends the last attribute's
	// unquoted value; the tokenizer compares with the last attribute it
	// kept, and it drops repeated names.
	if b[j-2] == '/' && (named == 0 || j-2 != last.ve-1 || keyRepeats(b, attrsFrom, last)) {
		return tokSelfClosingTag
	}
	return tokStartTag
}

// attrSpan locates one attribute's key and value in the body.
type attrSpan struct{ ks, ke, vs, ve int }

// attrAt reads the attribute at b[j] (not space, not '>'); ok is false
// when the input ends inside it.
func attrAt(b []byte, j int) (a attrSpan, next int, ok bool) {
	n := len(b)
	a.ks = j
	for ; ; j++ {
		if j >= n {
			return a, n, false
		}
		c := b[j]
		if c == '=' && j == a.ks {
			continue // a leading '=' belongs to the name
		}
		if c == '=' || c == '/' || c == '>' || isTagSpace(c) {
			break
		}
	}
	a.ke, a.vs, a.ve = j, j, j
	if j = skipTagSpace(b, j); j >= n {
		return a, n, false
	}
	switch b[j] {
	case '/':
		return a, j + 1, true
	case '=':
	default:
		return a, j, true
	}
	if j = skipTagSpace(b, j+1); j >= n {
		return a, n, false
	}
	switch q := b[j]; q {
	case '>':
		return a, j, true
	case '"', '\'':
		k := bytes.IndexByte(b[j+1:], q)
		if k < 0 {
			return a, n, false
		}
		a.vs, a.ve = j+1, j+1+k
		return a, a.ve + 1, true
	}
	a.vs = j
	for j++; j < n; j++ {
		if isTagSpace(b[j]) {
			a.ve = j
			return a, j + 1, true
		}
		if b[j] == '>' {
			a.ve = j
			return a, j, true
		}
	}
	return a, n, false
}

// keyRepeats reports whether last's name occurred earlier in the tag
// whose attributes start at j, ASCII case-insensitively.
func keyRepeats(b []byte, j int, last attrSpan) bool {
	key := b[last.ks:last.ke]
	for j < last.ks {
		a, next, _ := attrAt(b, j)
		if a.ks != a.ke && equalFoldASCII(b[a.ks:a.ke], key) {
			return true
		}
		j = skipTagSpace(b, next)
	}
	return false
}

func equalFoldASCII(a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if lowerASCII(a[i]) != lowerASCII(b[i]) {
			return false
		}
	}
	return true
}

// keyIs compares an attribute name with a lower-case wanted name.
func keyIs(key []byte, want string) bool {
	if len(key) != len(want) {
		return false
	}
	for i := range key {
		if lowerASCII(key[i]) != want[i] {
			return false
		}
	}
	return true
}

// take keeps the attribute a if it is wanted and no earlier attribute of
// the same name was kept (browsers keep the first).
func (t *tagAttrs) take(b []byte, a attrSpan, want attrSet) {
	key := b[a.ks:a.ke]
	for w := want &^ t.seen; w != 0; w &= w - 1 {
		k := attrKind(bits.TrailingZeros16(uint16(w)))
		if keyIs(key, attrNames[k]) {
			t.val[k] = attrValue(b[a.vs:a.ve])
			t.seen |= 1 << k
			return
		}
	}
}

var (
	nul         = []byte{0}
	replacement = []byte("\ufffd")
)

// attrValue is an attribute's value as the tokenizer gives it: NUL
// replaced, newlines normalized, character references decoded the way
// attributes decode them.
func attrValue(v []byte) string {
	if bytes.IndexByte(v, 0) >= 0 {
		v = bytes.ReplaceAll(v, nul, replacement)
	}
	v = convertNewlines(v)
	if bytes.IndexByte(v, '&') < 0 {
		return string(v)
	}
	return unescapeAttr(string(v))
}

// convertNewlines turns CRLF and lone CR into LF, copying only if needed.
func convertNewlines(s []byte) []byte {
	if bytes.IndexByte(s, '\r') < 0 {
		return s
	}
	s = bytes.ReplaceAll(s, []byte("\r\n"), []byte("\n"))
	return bytes.ReplaceAll(s, []byte("\r"), []byte("\n"))
}

// unescapeAttr decodes character references as in an attribute value,
// which differs from text in two ways: a name without ';' followed by '='
// stays as written ("?a=1&copy=2" is a URL, not a copyright sign), and a
// name is decoded only as a whole, never by a known prefix. It is built on
// html.UnescapeString, the text rules, one reference at a time.
func unescapeAttr(s string) string {
	i := strings.IndexByte(s, '&')
	if i < 0 {
		return s
	}
	var out strings.Builder
	out.Grow(len(s))
	out.WriteString(s[:i])
	for s = s[i:]; s != ""; {
		k := strings.IndexByte(s[1:], '&') + 1
		if k == 0 {
			k = len(s)
		}
		out.WriteString(unescapeAttrRef(s[:k]))
		s = s[k:]
	}
	return out.String()
}

// unescapeAttrRef decodes p, which starts with '&' and holds no other '&'.
func unescapeAttrRef(p string) string {
	if len(p) < 2 {
		return p
	}
	if p[1] == '#' { // numeric references decode alike in text and attributes
		return html.UnescapeString(p)
	}
	i := 1
	for i < len(p) && (isLetter(p[i]) || '0' <= p[i] && p[i] <= '9') {
		i++
	}
	if i == 1 {
		return p
	}
	if i < len(p) && p[i] == ';' {
		ref := p[:i+1]
		// The whole name decodes to one or two characters, never ending
		// in ';' but for "&semi;"; a decoded prefix leaves the ';' behind.
		if r := html.UnescapeString(ref); r != ref && (r == ";" || !strings.HasSuffix(r, ";")) {
			return r + p[i+1:]
		}
		return p
	}
	if i < len(p) && p[i] == '=' {
		return p
	}
	// Without ';' only legacy names decode, each to one character; a
	// decoded prefix would leave more behind.
	ref := p[:i]
	if r := html.UnescapeString(ref); utf8.RuneCountInString(r) == 1 {
		return r + p[i:]
	}
	return p
}

// rawEnd finds where raw text or RCDATA of the named element ends: at the
// first "</name" (ASCII case-insensitive) followed by space, '/' or '>',
// else at the end of input.
func rawEnd(b []byte, j int, name string) int {
	for {
		k := bytes.IndexByte(b[j:], '<')
		if k < 0 {
			return len(b)
		}
		lt := j + k
		if lt+1 < len(b) && b[lt+1] == '/' {
			ok, at := endTagAt(b, lt+2, name)
			if ok {
				return lt
			}
			if at >= len(b) {
				return len(b)
			}
		}
		j = lt + 1
	}
}

// endTagAt matches name plus a delimiter at b[j]; if it does not match, at
// is where matching stopped (len(b) when input ran out).
func endTagAt(b []byte, j int, name string) (ok bool, at int) {
	for i := 0; i < len(name); i++ {
		if j+i >= len(b) {
			return false, len(b)
		}
		if lowerASCII(b[j+i]) != name[i] {
			return false, j + i
		}
	}
	at = j + len(name)
	if at >= len(b) {
		return false, len(b)
	}
	switch b[at] {
	case ' ', '\n', '\r', '\t', '\f', '/', '>':
		return true, at
	}
	return false, at
}

// Script data states of the HTML tokenizer; "<!--" in a script hides a
// "</script>" that follows a nested "<script".
const (
	sData = iota
	sEscaped
	sEscapedDash
	sEscapedDashDash
	sDoubleEscaped
	sDoubleEscapedDash
	sDoubleEscapedDashDash
)

// scriptEnd finds where a script's text that starts at b[j] ends: at its
// end tag's '<', or at the end of input.
func scriptEnd(b []byte, j int) int {
	n := len(b)
	state := sData
	for j < n {
		if state == sData {
			k := bytes.IndexByte(b[j:], '<')
			if k < 0 {
				return n
			}
			lt := j + k
			j = lt + 1
			if j >= n {
				return n
			}
			switch b[j] {
			case '/':
				ok, at := endTagAt(b, j+1, "script")
				if ok {
					return lt
				}
				j = at
			case '!':
				// "<!--" enters the escaped states; anything short of it
				// is read again as script data.
				if j+1 >= n || b[j+1] != '-' {
					j++
					break
				}
				if j+2 >= n || b[j+2] != '-' {
					j += 2
					break
				}
				state, j = sEscapedDashDash, j+3
			}
			continue
		}
		c := b[j]
		j++
		switch c {
		case '-':
			switch state {
			case sEscaped:
				state = sEscapedDash
			case sEscapedDash:
				state = sEscapedDashDash
			case sDoubleEscaped:
				state = sDoubleEscapedDash
			case sDoubleEscapedDash:
				state = sDoubleEscapedDashDash
			}
			continue
		case '>':
			if state == sEscapedDashDash || state == sDoubleEscapedDashDash {
				state = sData
				continue
			}
		case '<':
			if j >= n {
				return n
			}
			if state < sDoubleEscaped {
				switch c2 := b[j]; {
				case c2 == '/':
					ok, at := endTagAt(b, j+1, "script")
					if ok {
						return j - 1
					}
					j, state = at, sEscaped
				case isLetter(c2):
					ok, at := endTagAt(b, j, "script")
					if ok {
						j, state = at+1, sDoubleEscaped
					} else {
						j, state = at, sEscaped
					}
				default:
					state = sData
				}
				continue
			}
			if b[j] == '/' {
				ok, at := endTagAt(b, j+1, "script")
				if ok {
					j, state = at+1, sEscaped
				} else {
					if at >= n {
						return n
					}
					j, state = at, sDoubleEscaped
				}
				continue
			}
			state = sDoubleEscaped
			continue
		}
		if state < sDoubleEscaped {
			state = sEscaped
		} else {
			state = sDoubleEscaped
		}
	}
	return n
}

// rawText is the current text token's bytes as they stand in the body.
func (l *lexer) rawText() []byte { return l.b[l.start:l.end] }

// textBytes is the current text token's text: newlines normalized, NUL
// replaced in raw text and RCDATA, entities decoded outside raw text.
func (l *lexer) textBytes() []byte {
	s := convertNewlines(l.b[l.start:l.end])
	if l.text != textData && bytes.IndexByte(s, 0) >= 0 {
		s = bytes.ReplaceAll(s, nul, replacement)
	}
	if l.text != textRaw && bytes.IndexByte(s, '&') >= 0 {
		s = []byte(html.UnescapeString(string(s)))
	}
	return s
}
