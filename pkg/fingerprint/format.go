package fingerprint

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/dlclark/regexp2"
)

// kind is the piece of evidence a pattern looks at.
type kind uint8

const (
	kindURL kind = iota
	kindHTML
	kindText
	kindCSS
	kindScriptSrc
	kindScripts
	kindRobots
	kindCertIssuer
	kindHeaders
	kindCookies
	kindMeta
	kindDNS
	numKinds
)

var kindNames = [numKinds]string{"url", "html", "text", "css", "scriptSrc", "scripts",
	"robots", "certIssuer", "headers", "cookies", "meta", "dns"}

// pattern is one compiled Wappalyzer pattern string.
type pattern struct {
	kind    kind
	key     string // header, cookie or meta name (lower-case); DNS type (upper-case)
	written string // the regex as written, without attributes
	// source is the RE2 regex the prefilter analyses and the engine runs:
	// written itself, or for a pattern RE2 refuses, the same without its
	// look-arounds ("" when RE2 cannot parse even that).
	source string
	re     *regexp.Regexp // source compiled; nil when source is ""
	// backtrack is the pattern as written, set when RE2 refuses it. It
	// runs only where re matches (see evalBacktrack).
	backtrack  *regexp2.Regexp
	version    string // template with \N and \N?a:b; "" when the pattern reveals none
	confidence int
}

// same reports whether q says what p says, so a technology defined twice
// keeps one copy.
func (p *pattern) same(q *pattern) bool {
	return p.kind == q.kind && p.key == q.key && p.written == q.written &&
		p.version == q.version && p.confidence == q.confidence
}

// maxVersionLen drops "versions" that are really a captured run of markup.
const maxVersionLen = 32

// versionOf expands the pattern's version template against the submatch
// indices m of text. It returns "" when the result is not a usable version.
func (p *pattern) versionOf(text string, m []int) string {
	if p.version == "" || m == nil {
		return ""
	}
	group := func(i int) string {
		if 2*i+1 < len(m) && m[2*i] >= 0 {
			return text[m[2*i]:m[2*i+1]]
		}
		return ""
	}
	v := strings.TrimSpace(expandVersion(p.version, group))
	if v == "" || len(v) > maxVersionLen {
		return ""
	}
	return v
}

// expandVersion replaces \N with group N and resolves the ternary \N?a:b
// (a when group N matched something, else b; the ternary runs to the end of
// the template, and a cannot contain ':'), as Wappalyzer defines them.
func expandVersion(tmpl string, group func(int) string) string {
	var b strings.Builder
	for i := 0; i < len(tmpl); i++ {
		c := tmpl[i]
		if c != '\\' || i+1 >= len(tmpl) || !isDigit(tmpl[i+1]) {
			b.WriteByte(c)
			continue
		}
		j := i + 1
		for j < len(tmpl) && isDigit(tmpl[j]) {
			j++
		}
		n, _ := strconv.Atoi(tmpl[i+1 : j])
		if j < len(tmpl) && tmpl[j] == '?' {
			if colon := strings.IndexByte(tmpl[j+1:], ':'); colon > 0 {
				yes, no := tmpl[j+1:j+1+colon], tmpl[j+2+colon:]
				if group(n) != "" {
					b.WriteString(expandVersion(yes, group))
				} else {
					b.WriteString(expandVersion(no, group))
				}
				return b.String()
			}
		}
		b.WriteString(group(n))
		i = j - 1
	}
	return b.String()
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// maxGroupRef is the highest \N a version template uses.
func maxGroupRef(tmpl string) int {
	max := 0
	for i := 0; i+1 < len(tmpl); i++ {
		if tmpl[i] != '\\' || !isDigit(tmpl[i+1]) {
			continue
		}
		j := i + 1
		for j < len(tmpl) && isDigit(tmpl[j]) {
			j++
		}
		if n, err := strconv.Atoi(tmpl[i+1 : j]); err == nil && n > max {
			max = n
		}
		i = j - 1
	}
	return max
}

// patternAttrs splits `regex\;version:\1\;confidence:50`.
type patternAttrs struct {
	regex      string
	version    string
	confidence int
}

func splitPattern(s string) (patternAttrs, error) {
	parts := strings.Split(s, `\;`)
	a := patternAttrs{regex: parts[0], confidence: 100}
	for _, attr := range parts[1:] {
		key, value, _ := strings.Cut(attr, ":")
		switch key {
		case "version":
			a.version = value
		case "confidence":
			n, err := strconv.Atoi(strings.TrimSpace(value))
			if err != nil || n < 0 || n > 100 {
				return a, fmt.Errorf("confidence %q is not an integer 0..100", value)
			}
			a.confidence = n
		default:
			return a, fmt.Errorf("unknown attribute %q", key)
		}
	}
	return a, nil
}

// compilePattern builds a case-insensitive pattern, as Wappalyzer matches.
// A regex RE2 refuses (look-around, back-references) goes to the
// backtracking engine instead. warning is set when the pattern loads but
// cannot do all it says: a version that names a group the regex lacks is
// dropped, and the pattern still detects.
func compilePattern(k kind, key, s string) (p *pattern, warning string, err error) {
	a, err := splitPattern(s)
	if err != nil {
		return nil, "", err
	}
	p = &pattern{kind: k, key: key, written: a.regex, source: a.regex, version: a.version, confidence: a.confidence}
	var groups int
	if re, rerr := regexp.Compile("(?i)" + a.regex); rerr == nil {
		p.re, groups = re, re.NumSubexp()
	} else {
		bt, berr := compileBacktrack(a.regex)
		if berr != nil {
			return nil, "", fmt.Errorf("RE2 cannot compile it (%s), nor can the backtracking engine (%s)",
				strings.TrimPrefix(rerr.Error(), "error parsing regexp: "), strings.TrimPrefix(berr.Error(), "error parsing regexp: "))
		}
		p.backtrack, groups = bt, len(bt.GetGroupNumbers())-1
		p.source = withoutLookaround(a.regex)
		if re, err := regexp.Compile("(?i)" + p.source); err == nil && p.source != "" {
			p.re = re
		} else {
			p.source = ""
		}
	}
	if n := maxGroupRef(a.version); n > groups {
		warning = fmt.Sprintf("version uses group %d but the regex has %d; the pattern detects without a version", n, groups)
		p.version = ""
	}
	return p, warning, nil
}

// withoutLookaround removes the look-ahead and look-behind groups of a
// regex. They consume no text, so what remains matches wherever the regex
// matches, with the same span (and perhaps elsewhere too): a sound stand-in
// for the literal prefilter, and for finding where the regex can match.
func withoutLookaround(src string) string {
	var b strings.Builder
	for i := 0; i < len(src); {
		switch {
		case src[i] == '\\' && i+1 < len(src):
			b.WriteString(src[i : i+2])
			i += 2
		case src[i] == '[':
			j := classEnd(src, i)
			b.WriteString(src[i:j])
			i = j
		case isLookaround(src[i:]):
			i = groupEnd(src, i)
		default:
			b.WriteByte(src[i])
			i++
		}
	}
	return b.String()
}

func isLookaround(s string) bool {
	for _, open := range []string{"(?=", "(?!", "(?<=", "(?<!"} {
		if strings.HasPrefix(s, open) {
			return true
		}
	}
	return false
}

// classEnd returns the offset just past the character class opening at
// i; a ']' right after '[' or '[^' is a literal, as in RE2.
func classEnd(src string, i int) int {
	j := i + 1
	if j < len(src) && src[j] == '^' {
		j++
	}
	if j < len(src) && src[j] == ']' {
		j++
	}
	for j < len(src) && src[j] != ']' {
		if src[j] == '\\' {
			j++
		}
		j++
	}
	return min(j+1, len(src))
}

// groupEnd returns the offset just past the group opening at i (the whole
// string when it is not closed).
func groupEnd(src string, i int) int {
	depth := 0
	for j := i; j < len(src); {
		switch src[j] {
		case '\\':
			j += 2
			continue
		case '[':
			j = classEnd(src, j)
			continue
		case '(':
			depth++
		case ')':
			if depth--; depth == 0 {
				return j + 1
			}
		}
		j++
	}
	return len(src)
}

// metadataFields are Wappalyzer fields that carry no pattern (or, for
// probe, patterns for requests a scan does not make). They load quietly.
var metadataFields = map[string]bool{"saas": true, "oss": true, "pricing": true, "probe": true}

// ParseTechnologies reads one Wappalyzer-format object (name -> technology).
// The technologies come back even when err is not nil; err then lists every
// problem (each a Problem), so an API can refuse a bad pattern by name.
func ParseTechnologies(data []byte) (map[string]*Technology, error) {
	list, err := parseTechnologies(data)
	if err != nil {
		return nil, err
	}
	out := make(map[string]*Technology, len(list))
	var errs []error
	for _, t := range list {
		out[t.Name] = t
		for _, p := range t.problems {
			errs = append(errs, p)
		}
	}
	return out, errors.Join(errs...)
}

// parseTechnologies keeps file order and refuses a name written twice in
// one object, which encoding/json would silently collapse.
func parseTechnologies(data []byte) ([]*Technology, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("technologies must be a JSON object of name -> technology")
	}
	seen := map[string]bool{}
	var out []*Technology
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		name := tok.(string)
		var raw map[string]json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("technology %q: %w", name, err)
		}
		if strings.TrimSpace(name) == "" {
			return nil, errors.New("a technology has an empty name")
		}
		if seen[name] {
			return nil, fmt.Errorf("technology %q is defined twice", name)
		}
		seen[name] = true
		t, err := parseTechnology(name, raw)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("trailing data after the technologies object")
	}
	return out, nil
}

// parseTechnology fails only on a malformed field; a pattern that does not
// compile is recorded as a problem and the rest of the technology loads.
func parseTechnology(name string, raw map[string]json.RawMessage) (*Technology, error) {
	t := &Technology{Name: name, Slug: Slug(name)}
	r := &rule{}
	t.rules = []*rule{r}
	problem := func(field, pattern, reason string) {
		t.problems = append(t.problems, Problem{Technology: name, Field: field, Pattern: pattern, Reason: reason})
	}
	addList := func(k kind, field, key string, values []string) {
		for _, v := range values {
			p, warning, err := compilePattern(k, key, v)
			if err != nil {
				problem(field, v, err.Error())
				continue
			}
			if warning != "" {
				problem(field, v, warning)
			}
			r.patterns = append(r.patterns, p)
		}
	}
	for _, field := range slices.Sorted(maps.Keys(raw)) {
		value := raw[field]
		bad := func(err error) error { return fmt.Errorf("technology %q: field %q: %w", name, field, err) }
		switch field {
		case "cats":
			ids, err := intList(value)
			if err != nil {
				return nil, bad(err)
			}
			t.categoryIDs = ids
		case "requiresCategory":
			ids, err := intList(value)
			if err != nil {
				return nil, bad(err)
			}
			r.requiresCategory = ids
		case "website", "description", "icon", "cpe":
			var s string
			if err := json.Unmarshal(value, &s); err != nil {
				return nil, bad(err)
			}
			switch field {
			case "website":
				t.Website = s
			case "description":
				t.Description = s
			case "icon":
				t.Icon = s
			default:
				t.CPE = s
			}
		case "html", "text", "css", "scriptSrc", "scripts", "url", "robots", "certIssuer":
			list, err := stringList(value)
			if err != nil {
				return nil, bad(err)
			}
			k := kind(slices.Index(kindNames[:], field))
			addList(k, field, "", list)
		case "headers", "cookies", "meta", "dns":
			m, err := stringListMap(value)
			if err != nil {
				return nil, bad(err)
			}
			k := kind(slices.Index(kindNames[:], field))
			for _, key := range slices.Sorted(maps.Keys(m)) {
				norm := strings.ToLower(key)
				if k == kindDNS {
					norm = strings.ToUpper(key)
				}
				addList(k, field+"."+key, norm, m[key])
			}
		case "implies", "excludes", "requires":
			list, err := stringList(value)
			if err != nil {
				return nil, bad(err)
			}
			for _, s := range list {
				a, err := splitPattern(s)
				name := strings.TrimSpace(a.regex)
				if err == nil && name == "" {
					err = errors.New("empty technology name")
				}
				if err != nil {
					problem(field, s, err.Error())
					continue
				}
				switch field {
				case "implies":
					t.implies = append(t.implies, reference{name: name, confidence: a.confidence, version: a.version})
				case "excludes":
					t.excludes = append(t.excludes, name)
				default:
					r.requires = append(r.requires, name)
				}
			}
		case "js", "xhr", "dom":
			// Not evaluated yet: a shape we cannot read is a problem,
			// not a reason to refuse the technology.
			if err := t.deferred.add(field, value, problem); err != nil {
				problem(field, "", err.Error())
			}
		default:
			if !metadataFields[field] {
				problem(field, "", "unknown field, ignored")
			}
		}
	}
	return t, nil
}

// stringList accepts a string or an array of strings.
func stringList(raw json.RawMessage) ([]string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return []string{s}, nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, errors.New("want a string or an array of strings")
	}
	return list, nil
}

// intList accepts a number or an array of numbers.
func intList(raw json.RawMessage) ([]int, error) {
	var n int
	if err := json.Unmarshal(raw, &n); err == nil {
		return []int{n}, nil
	}
	var list []int
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, errors.New("want an integer or an array of integers")
	}
	return list, nil
}

// stringListMap accepts an object whose values are strings or arrays.
func stringListMap(raw json.RawMessage) (map[string][]string, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, errors.New("want an object")
	}
	out := make(map[string][]string, len(m))
	for k, v := range m {
		list, err := stringList(v)
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", k, err)
		}
		out[k] = list
	}
	return out, nil
}

// add parses and counts the js, xhr or dom patterns of raw. js is an object
// of property paths to patterns; xhr a pattern or a list of them; dom a
// selector, a list of selectors, or an object of selectors to checks
// ("exists", "text", "attributes" and "properties", the last two objects of
// names to patterns). A pattern whose attributes cannot be read, or an
// unknown dom check, is a problem; a malformed shape is returned.
func (c *deferredCounts) add(field string, raw json.RawMessage, problem func(field, pattern, reason string)) error {
	check := func(where, s string) {
		if _, err := splitPattern(s); err != nil {
			problem(where, s, err.Error())
		}
	}
	switch field {
	case "js":
		m, err := stringListMap(raw)
		if err != nil {
			return err
		}
		for _, key := range slices.Sorted(maps.Keys(m)) {
			for _, s := range m[key] {
				check("js."+key, s)
				c.js++
			}
		}
	case "xhr":
		list, err := stringList(raw)
		if err != nil {
			return err
		}
		for _, s := range list {
			check("xhr", s)
			c.xhr++
		}
	default:
		if list, err := stringList(raw); err == nil {
			c.dom += len(list)
			return nil
		}
		var sels map[string]map[string]json.RawMessage
		if err := json.Unmarshal(raw, &sels); err != nil {
			return errors.New("want a selector, an array of selectors or an object of selectors to checks")
		}
		for _, sel := range slices.Sorted(maps.Keys(sels)) {
			if err := c.addDOMChecks("dom."+sel, sels[sel], check, problem); err != nil {
				return fmt.Errorf("selector %q: %w", sel, err)
			}
		}
	}
	return nil
}

// addDOMChecks counts the checks of one dom selector; a selector without
// any checks only has to exist.
func (c *deferredCounts) addDOMChecks(where string, checks map[string]json.RawMessage, check func(where, s string), problem func(field, pattern, reason string)) error {
	if len(checks) == 0 {
		c.dom++
	}
	for _, name := range slices.Sorted(maps.Keys(checks)) {
		switch name {
		case "exists", "text":
			var s string
			if err := json.Unmarshal(checks[name], &s); err != nil {
				return fmt.Errorf("%s: want a string", name)
			}
			check(where+"."+name, s)
			c.dom++
		case "attributes", "properties":
			m, err := stringListMap(checks[name])
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			for _, key := range slices.Sorted(maps.Keys(m)) {
				for _, s := range m[key] {
					check(where+"."+name+"."+key, s)
					if name == "attributes" {
						c.dom++
					} else {
						c.domProperties++
					}
				}
			}
		default:
			problem(where, name, "unknown dom check, ignored")
		}
	}
	return nil
}

// Slug makes the URL-safe name Wappalyzer uses: lower-case, each run of
// characters other than a-z and 0-9 becomes one '-', none at either end.
func Slug(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
			continue
		}
		dash = true
	}
	return b.String()
}

func quote(s string) string { return strconv.Quote(s) }
