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
	kind       kind
	key        string // header, cookie or meta name (lower-case); DNS type (upper-case)
	source     string // the regex as written, without attributes
	re         *regexp.Regexp
	version    string // template with \N and \N?a:b; "" when the pattern reveals none
	confidence int
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
func compilePattern(k kind, key, s string) (*pattern, error) {
	a, err := splitPattern(s)
	if err != nil {
		return nil, err
	}
	re, err := regexp.Compile("(?i)" + a.regex)
	if err != nil {
		return nil, fmt.Errorf("RE2 cannot compile it: %s", strings.TrimPrefix(err.Error(), "error parsing regexp: "))
	}
	if n := maxGroupRef(a.version); n > re.NumSubexp() {
		return nil, fmt.Errorf("version uses group %d but the regex has %d", n, re.NumSubexp())
	}
	return &pattern{kind: k, key: key, source: a.regex, re: re, version: a.version, confidence: a.confidence}, nil
}

// metadataFields are Wappalyzer fields that describe rather than detect.
var metadataFields = map[string]bool{"saas": true, "oss": true, "pricing": true}

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

// parseTechnologies keeps file order and refuses duplicate names, which
// encoding/json would silently collapse.
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
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	addList := func(k kind, field, key string, values []string) {
		for _, v := range values {
			p, err := compilePattern(k, key, v)
			if err != nil {
				t.problems = append(t.problems, Problem{Technology: name, Field: field, Pattern: v, Reason: err.Error()})
				continue
			}
			t.patterns = append(t.patterns, p)
		}
	}
	for _, field := range keys {
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
			t.requiresCategory = ids
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
					t.problems = append(t.problems, Problem{Technology: t.Name, Field: field, Pattern: s, Reason: err.Error()})
					continue
				}
				switch field {
				case "implies":
					t.implies = append(t.implies, reference{name: name, confidence: a.confidence, version: a.version})
				case "excludes":
					t.excludes = append(t.excludes, name)
				default:
					t.requires = append(t.requires, name)
				}
			}
		case "js", "dom", "xhr":
			n, err := countPatterns(value)
			if err != nil {
				return nil, bad(err)
			}
			t.notEvaluated += n
		default:
			if !metadataFields[field] {
				t.problems = append(t.problems, Problem{Technology: name, Field: field, Reason: "unknown field, ignored"})
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

// countPatterns counts js/dom/xhr patterns: a string is one, an array or
// object holds one per element.
func countPatterns(raw json.RawMessage) (int, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return 0, err
	}
	switch v := v.(type) {
	case string:
		return 1, nil
	case []any:
		return len(v), nil
	case map[string]any:
		return len(v), nil
	}
	return 0, errors.New("want a string, an array or an object")
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
