package fingerprint

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/andybalholm/cascadia"
)

// A dom pattern names elements by a CSS selector and checks that one
// exists, or that its attribute or its text matches a regex. The static
// page answers all of that but "properties" (a rendered page's state),
// which stays counted as needing a browser.
//
// The cost is kept to what a page can match:
//   - while ParseHTML lexes a page it notes, in a small Bloom filter
//     (domSeen), every tag name, attribute name, id and class it meets;
//   - a selector is a candidate only when the filter holds every name it
//     requires (domAlt.need); a page without any candidate costs a few
//     bit tests per selector and no tree;
//   - otherwise the page's tree is built once (domTree, from the same
//     lexer) and the candidates run on it.
//
// Matching cost is bounded by the tree's depth (capped at maxDOMDepth) and
// by the selectors accepted: at most one descendant combinator, and no
// construct that walks a node's siblings or subtree (~, :nth-*, :has...),
// so each element costs a selector O(maxDOMDepth) steps at most.

// domCheck is what a dom pattern checks on the elements its selector names.
type domCheck uint8

const (
	domExists domCheck = iota
	domAttribute
	domText
)

// domSelector is one compiled selector of a dom field, shared by its
// checks.
type domSelector struct {
	text string
	alts []domAlt // its alternatives (top-level commas)
}

// domAlt is one alternative: cascadia's matcher and the hashes of the
// names an element or its ancestors must show for it to match.
type domAlt struct {
	sel  cascadia.Sel
	need []uint64
}

// canMatch: some alternative's names are all on the page.
func (s *domSelector) canMatch(seen *domSeen) bool {
	for i := range s.alts {
		if s.alts[i].canMatch(seen) {
			return true
		}
	}
	return false
}

func (a *domAlt) canMatch(seen *domSeen) bool {
	for _, h := range a.need {
		if !seen.has(h) {
			return false
		}
	}
	return true
}

// compileSelector parses a selector for the static page, refusing what
// could make matching cost more than linear in the page.
func compileSelector(text string) (*domSelector, error) {
	s := &domSelector{text: text}
	for _, alt := range splitTop(text, ',') {
		alt = strings.TrimSpace(alt)
		need, err := selectorNeeds(alt)
		if err != nil {
			return nil, err
		}
		sel, err := cascadia.Parse(alt)
		if err != nil {
			return nil, err
		}
		s.alts = append(s.alts, domAlt{sel: sel, need: need})
	}
	if len(s.alts) == 0 {
		return nil, errors.New("empty selector")
	}
	return s, nil
}

// splitTop splits s at sep outside brackets, parentheses and quotes.
func splitTop(s string, sep byte) []string {
	var out []string
	depth, quote, from := 0, byte(0), 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\':
			i++
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '(' || c == '[':
			depth++
		case c == ')' || c == ']':
			depth--
		case c == sep && depth == 0:
			out = append(out, s[from:i])
			from = i + 1
		}
	}
	return append(out, s[from:])
}

// cheapPseudo are the pseudo-classes that look at the element alone, its
// parent, or (with text nodes merged) its nearest sibling.
var cheapPseudo = map[string]bool{"first-child": true, "root": true, "empty": true, "link": true, "checked": true}

// selectorNeeds returns the hashes of the tag names, ids, classes and
// attribute names one complex selector requires, or why it is refused.
// It errs on the side of requiring less: what it does not understand it
// does not require.
func selectorNeeds(sel string) ([]uint64, error) {
	var need []uint64
	descendants := 0
	compound := false // inside a compound: the next name is no tag
	space := false
	for i := 0; i < len(sel); {
		c := sel[i]
		if isTagSpace(c) {
			space = true
			i++
			continue
		}
		if space && compound && c != '>' && c != '+' && c != '~' {
			descendants++
			compound = false
		}
		space = false
		switch {
		case c == '\\':
			return nil, errors.New("escapes in selectors are not evaluated on the static page")
		case c == '>' || c == '+':
			compound = false
			i++
		case c == '~':
			return nil, errors.New("the sibling combinator ~ is not evaluated on the static page")
		case c == '*':
			compound = true
			i++
		case c == '#' || c == '.':
			name, j := selectorIdent(sel, i+1)
			if name != "" {
				need = append(need, tokenHash(c, []byte(name)))
			}
			compound, i = true, j
		case c == '[':
			name, _ := selectorIdent(sel, skipSpaceString(sel, i+1))
			if name != "" {
				need = append(need, tokenHash('@', []byte(name)))
			}
			end := closing(sel, i)
			if end < 0 {
				return nil, errors.New("unclosed [")
			}
			compound, i = true, end+1
		case c == ':':
			if i+1 < len(sel) && sel[i+1] == ':' {
				return nil, errors.New("pseudo-elements are not evaluated on the static page")
			}
			name, j := selectorIdent(sel, i+1)
			name = strings.ToLower(name)
			if j < len(sel) && sel[j] == '(' {
				end := closing(sel, j)
				if end < 0 {
					return nil, errors.New("unclosed (")
				}
				if name != "not" || strings.ContainsAny(strings.TrimSpace(sel[j+1:end]), " \t\n>+~,(") {
					return nil, fmt.Errorf(":%s(...) is not evaluated on the static page (only :not of a simple compound)", name)
				}
				j = end + 1
			} else if !cheapPseudo[name] {
				return nil, fmt.Errorf(":%s is not evaluated on the static page", name)
			}
			compound, i = true, j
		default:
			name, j := selectorIdent(sel, i)
			if j == i {
				i++ // let cascadia judge it
				continue
			}
			if !compound {
				need = append(need, tokenHash('t', []byte(name)))
			}
			compound, i = true, j
		}
	}
	if descendants > 1 {
		return nil, errors.New("more than one descendant combinator is not evaluated on the static page")
	}
	return need, nil
}

// selectorIdent reads a CSS identifier at s[i].
func selectorIdent(s string, i int) (string, int) {
	j := i
	for j < len(s) && (isLetter(s[j]) || isDigit(s[j]) || s[j] == '-' || s[j] == '_' || s[j] >= 0x80) {
		j++
	}
	return s[i:j], j
}

func skipSpaceString(s string, i int) int {
	for i < len(s) && isTagSpace(s[i]) {
		i++
	}
	return i
}

// closing returns the index of the bracket closing s[i], or -1.
func closing(s string, i int) int {
	open, shut := s[i], byte(']')
	if open == '(' {
		shut = ')'
	}
	depth, quote := 0, byte(0)
	for j := i; j < len(s); j++ {
		c := s[j]
		switch {
		case c == '\\':
			j++
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == open:
			depth++
		case c == shut:
			if depth--; depth == 0 {
				return j
			}
		}
	}
	return -1
}

// addDOM reads a dom field into r's patterns: a selector, a list of them,
// or an object of selectors to checks ("exists", "text", "attributes";
// "properties" are counted in t.deferred for a rendered scan). A selector
// the static page cannot evaluate is a problem, and its checks are
// counted as not evaluated.
func addDOM(t *Technology, r *rule, raw json.RawMessage, problem func(field, pattern, reason string)) error {
	var sels map[string]map[string]json.RawMessage
	if list, err := stringList(raw); err == nil {
		sels = map[string]map[string]json.RawMessage{}
		for _, s := range list {
			sels[s] = nil
		}
	} else if err := json.Unmarshal(raw, &sels); err != nil {
		return errors.New("want a selector, an array of selectors or an object of selectors to checks")
	}
	for _, text := range slices.Sorted(maps.Keys(sels)) {
		if err := addSelector(t, r, text, sels[text], problem); err != nil {
			return fmt.Errorf("selector %q: %w", text, err)
		}
	}
	return nil
}

// domPattern is one check of a selector before compilation: "" for the
// check's pattern means "matches anything", as Wappalyzer reads it.
type domPattern struct {
	check domCheck
	key   string // attribute name
	value string
	where string
}

func addSelector(t *Technology, r *rule, text string, checks map[string]json.RawMessage, problem func(field, pattern, reason string)) error {
	where := "dom." + text
	var list []domPattern
	properties := 0
	if len(checks) == 0 {
		list = append(list, domPattern{check: domExists, where: where})
	}
	for _, name := range slices.Sorted(maps.Keys(checks)) {
		switch name {
		case "exists", "text":
			var s string
			if err := json.Unmarshal(checks[name], &s); err != nil {
				return fmt.Errorf("%s: want a string", name)
			}
			c := domExists
			if name == "text" {
				c = domText
			}
			list = append(list, domPattern{check: c, value: s, where: where + "." + name})
		case "attributes", "properties":
			m, err := stringListMap(checks[name])
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			for _, key := range slices.Sorted(maps.Keys(m)) {
				for _, s := range m[key] {
					if name == "properties" {
						if _, err := splitPattern(s); err != nil {
							problem(where+".properties."+key, s, err.Error())
						}
						properties++
						continue
					}
					list = append(list, domPattern{check: domAttribute, key: strings.ToLower(key), value: s, where: where + ".attributes." + key})
				}
			}
		default:
			problem(where, name, "unknown dom check, ignored")
		}
	}
	t.deferred.domProperties += properties
	if len(list) == 0 {
		return nil
	}
	sel, err := compileSelector(text)
	if err != nil {
		problem(where, text, err.Error())
		t.deferred.dom += len(list)
		return nil
	}
	for _, d := range list {
		p, warning, err := compilePattern(kindDOM, d.key, d.value)
		if err != nil {
			problem(d.where, d.value, err.Error())
			continue
		}
		if warning != "" {
			problem(d.where, d.value, warning)
		}
		p.dom, p.domCheck = sel, d.check
		r.patterns = append(r.patterns, p)
	}
	return nil
}

// addDOM files dom pattern pid under its selector.
func (e *Engine) addDOM(pid int32) {
	sel := e.pats[pid].dom
	if n := len(e.dom); n > 0 && e.dom[n-1].sel == sel {
		e.dom[n-1].pats = append(e.dom[n-1].pats, pid)
		return
	}
	e.dom = append(e.dom, domGroup{sel: sel, pats: []int32{pid}})
}

// matchDOM runs the dom patterns on ev's page: with prefilter, only the
// selectors whose names the page shows, on a tree built only if there is
// one; without (the naive reference), all of them.
func (e *Engine) matchDOM(sc *scratch, ev *Evidence, prefilter bool) {
	if len(e.dom) == 0 || ev.HTML == "" {
		return
	}
	seen := ev.dom
	if seen == nil && prefilter {
		sc.seen = domSeen{}
		summarize(validUTF8(ev.HTML), &sc.seen)
		seen = &sc.seen
	}
	sc.domCands = sc.domCands[:0]
	for gi := range e.dom {
		g := &e.dom[gi]
		if prefilter && (!g.sel.canMatch(seen) || e.settled(sc, g)) {
			continue
		}
		sc.domCands = append(sc.domCands, int32(gi))
	}
	if len(sc.domCands) == 0 {
		return
	}
	withText := false
	for _, gi := range sc.domCands {
		withText = withText || e.dom[gi].needsText(e)
	}
	tree := buildTree(validUTF8(ev.HTML), withText)
	for _, gi := range sc.domCands {
		g := &e.dom[gi]
		for ai := range g.sel.alts {
			if a := &g.sel.alts[ai]; !prefilter || a.canMatch(seen) {
				e.matchAlt(sc, g, a, tree)
			}
		}
	}
}

// validUTF8 returns page with invalid bytes replaced by U+FFFD, for the
// tree. Only pages with a candidate selector pay for the check: most have
// none.
func validUTF8(page string) string {
	if utf8.ValidString(page) {
		return page
	}
	return strings.ToValidUTF8(page, "\uFFFD")
}

// needsText: g reads text nodes, by a text check or by :empty.
func (g *domGroup) needsText(e *Engine) bool {
	if strings.Contains(g.sel.text, ":empty") {
		return true
	}
	for _, pid := range g.pats {
		if e.pats[pid].domCheck == domText {
			return true
		}
	}
	return false
}

// settled: every pattern of g has matched on this page and has no version
// to learn.
func (e *Engine) settled(sc *scratch, g *domGroup) bool {
	for _, pid := range g.pats {
		if sc.patPage[pid] != sc.page || e.pats[pid].version != "" {
			return false
		}
	}
	return true
}

// matchAlt runs the checks of g on the elements alternative a names.
func (e *Engine) matchAlt(sc *scratch, g *domGroup, a *domAlt, tree *domTree) {
	for _, n := range tree.elems {
		if e.settled(sc, g) {
			return
		}
		if !a.sel.Match(n) {
			continue
		}
		for _, pid := range g.pats {
			p := &e.pats[pid]
			if p.version == "" && sc.patPage[pid] == sc.page {
				continue
			}
			switch p.domCheck {
			case domExists:
				e.evalSearch(sc, pid, "", 0)
			case domAttribute:
				for _, at := range n.Attr {
					if at.Key == p.key {
						e.evalSearch(sc, pid, at.Val, 0)
						break
					}
				}
			case domText:
				sc.text = textContent(n, sc.text[:0])
				e.evalSearch(sc, pid, string(sc.text), 0)
			}
		}
	}
}
