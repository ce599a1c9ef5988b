package fingerprint

import (
	"bytes"
	"encoding/binary"
	"strings"

	"golang.org/x/net/html"
)

// domSeen is a Bloom filter of the names a page's start tags show: tag
// names ('t'), attribute names ('@'), ids ('#') and classes ('.'), ASCII
// case-insensitively. A false positive only builds a tree for nothing.
type domSeen struct {
	bits [domSeenWords]uint64
}

// 16,384 bits: a page with 2,000 distinct names gives a one-name selector
// a false positive about one time in twenty.
const domSeenWords = 256

// tokenHash hashes kind and name, ASCII case-insensitively. It runs on
// every name of every start tag ParseHTML reads, so it reads eight bytes
// at a time and folds case by setting bit 5 of every byte: that also
// merges a few punctuation bytes with others, which in a Bloom filter only
// adds false positives.
func tokenHash(kind byte, name []byte) uint64 {
	const fold = 0x2020202020202020
	h := uint64(kind)<<56 ^ uint64(len(name))
	for ; len(name) >= 8; name = name[8:] {
		h = mix(h ^ (binary.LittleEndian.Uint64(name) | fold))
	}
	var w uint64
	for i, c := range name {
		w |= uint64(c|0x20) << (8 * i)
	}
	return mix(h ^ w)
}

// mix is SplitMix64's finalizer: every input bit moves every output bit.
func mix(h uint64) uint64 {
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	return h ^ h>>31
}

func (s *domSeen) set(h uint64) {
	a, b := h&(domSeenWords*64-1), (h>>32)&(domSeenWords*64-1)
	s.bits[a/64] |= 1 << (a % 64)
	s.bits[b/64] |= 1 << (b % 64)
}

func (s *domSeen) has(h uint64) bool {
	a, b := h&(domSeenWords*64-1), (h>>32)&(domSeenWords*64-1)
	return s.bits[a/64]&(1<<(a%64)) != 0 && s.bits[b/64]&(1<<(b%64)) != 0
}

// note adds the current start tag of l: its name, its attributes' names,
// its id and its classes. It runs on every start tag ParseHTML reads, so
// it copies nothing unless a value holds a character reference.
func (s *domSeen) note(l *lexer) {
	b := l.b
	s.set(tokenHash('t', b[l.nameStart:l.nameEnd]))
	for _, a := range l.spans {
		key := b[a.ks:a.ke]
		s.set(tokenHash('@', key))
		if len(key) != 2 && len(key) != 5 {
			continue
		}
		v := b[a.vs:a.ve]
		if bytes.IndexByte(v, '&') >= 0 {
			v = []byte(attrValue(v))
		}
		switch {
		case keyIs(key, "id"):
			s.set(tokenHash('#', v))
		case keyIs(key, "class"):
			for i := 0; i < len(v); {
				for i < len(v) && isTagSpace(v[i]) {
					i++
				}
				j := i
				for j < len(v) && !isTagSpace(v[j]) {
					j++
				}
				if j > i {
					s.set(tokenHash('.', v[i:j]))
				}
				i = j
			}
		}
	}
}

// summarize lexes page for its domSeen, for evidence ParseHTML did not
// make.
func summarize(page string, s *domSeen) {
	lx := lexer{b: []byte(page), want: &noAttrs, keepSpans: true}
	for tt := lx.next(); tt != tokEOF; tt = lx.next() {
		if tt == tokStartTag || tt == tokSelfClosingTag {
			s.note(&lx)
		}
	}
}

var noAttrs [tagCount]attrSet

// Bounds of the tree a page builds: its depth (deeper elements become
// children of the deepest kept one, so an ancestor walk is short), how far
// up an end tag looks for its element, and the text kept per element for
// a text check.
const (
	maxDOMDepth   = 128
	maxEndTagLook = 32
	maxDOMText    = 64 << 10
)

// domTree is a page's elements as x/net/html nodes, for cascadia. It is
// built by the lexer, not by html.Parse: one pass with no tree-building
// corrections beyond closing the elements HTML closes implicitly (li, p,
// td...), which selectors of real products do not depend on, and with
// its depth capped.
type domTree struct {
	doc   html.Node
	elems []*html.Node // every element, in document order
}

// voidElements have no end tag and no content.
var voidElements = map[string]bool{"area": true, "base": true, "br": true, "col": true, "embed": true,
	"hr": true, "img": true, "input": true, "link": true, "meta": true, "param": true, "source": true,
	"track": true, "wbr": true, "keygen": true}

// closesSame: a start tag of these closes an open element of the same
// group at the top of the stack, as the HTML parser's implied end tags do.
var closesSame = map[string]string{"li": "li", "p": "p", "dt": "dd", "dd": "dd", "option": "option",
	"tr": "tr", "td": "td", "th": "td"}

// buildTree builds page's tree; without withText it leaves out text
// nodes, which only text checks and :empty read.
func buildTree(page string, withText bool) *domTree {
	t := &domTree{doc: html.Node{Type: html.DocumentNode}}
	lx := lexer{b: []byte(page), want: &noAttrs, keepSpans: true}
	stack := []*html.Node{&t.doc}
	names := map[string]string{} // interned lower-case names
	intern := func(b []byte) string {
		if s, ok := names[string(b)]; ok {
			return s
		}
		s := strings.ToLower(string(b))
		names[string(b)] = s
		return s
	}
	var chunk []html.Node
	node := func() *html.Node {
		if len(chunk) == 0 {
			chunk = make([]html.Node, 256)
		}
		n := &chunk[0]
		chunk = chunk[1:]
		return n
	}
	var slab []html.Attribute // elements' attributes, carved from shared chunks
	var text []string         // the text since the last tag: one node, however many tokens
	flush := func() {
		if len(text) == 0 {
			return
		}
		n := node()
		n.Type, n.Data = html.TextNode, strings.Join(text, "")
		stack[len(stack)-1].AppendChild(n)
		text = text[:0]
	}
	for tt := lx.next(); tt != tokEOF; tt = lx.next() {
		switch tt {
		case tokText:
			if !withText {
				continue
			}
			s := page[lx.start:lx.end]
			if lx.text != textRaw && strings.IndexByte(s, '&') >= 0 || strings.IndexByte(s, '\r') >= 0 || strings.IndexByte(s, 0) >= 0 {
				s = string(lx.textBytes())
			}
			text = append(text, s)
		case tokStartTag, tokSelfClosingTag:
			flush()
			n := node()
			n.Type, n.Data = html.ElementNode, intern(lx.b[lx.nameStart:lx.nameEnd])
			if cap(slab)-len(slab) < len(lx.spans) {
				slab = make([]html.Attribute, 0, max(1024, len(lx.spans)))
			}
			start := len(slab)
			for _, a := range lx.spans {
				key := intern(lx.b[a.ks:a.ke])
				if !hasKey(slab[start:], key) {
					slab = append(slab, html.Attribute{Key: key, Val: attrString(page, a)})
				}
			}
			n.Attr = slab[start:len(slab):len(slab)]
			if top := stack[len(stack)-1]; len(stack) > 1 && closesSame[top.Data] != "" && closesSame[top.Data] == closesSame[n.Data] {
				stack = stack[:len(stack)-1]
			}
			stack[len(stack)-1].AppendChild(n)
			t.elems = append(t.elems, n)
			if tt == tokStartTag && !voidElements[n.Data] && len(stack) <= maxDOMDepth {
				stack = append(stack, n)
			}
		case tokEndTag:
			flush()
			name := intern(lx.b[lx.nameStart:lx.nameEnd])
			for i := len(stack) - 1; i > 0 && i >= len(stack)-maxEndTagLook; i-- {
				if stack[i].Data == name {
					stack = stack[:i]
					break
				}
			}
		}
	}
	flush()
	return t
}

func hasKey(attrs []html.Attribute, key string) bool {
	for _, a := range attrs {
		if a.Key == key {
			return true
		}
	}
	return false
}

// attrString is an attribute's value, a substring of page unless it needs
// decoding.
func attrString(page string, a attrSpan) string {
	v := page[a.vs:a.ve]
	if strings.IndexByte(v, '&') < 0 && strings.IndexByte(v, '\r') < 0 && strings.IndexByte(v, 0) < 0 {
		return v
	}
	return attrValue([]byte(v))
}

// textContent is n's text and its descendants', as the DOM's textContent,
// up to maxDOMText bytes.
func textContent(n *html.Node, buf []byte) []byte {
	if n.Type == html.TextNode {
		return append(buf, n.Data[:min(len(n.Data), maxDOMText-len(buf))]...)
	}
	for c := n.FirstChild; c != nil && len(buf) < maxDOMText; c = c.NextSibling {
		buf = textContent(c, buf)
	}
	return buf
}
