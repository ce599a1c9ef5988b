package validate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/surveyor/surveyor/pkg/job"
)

// FieldError names one bad field, as problem+json lists them.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// Limits of the contract.
const (
	MaxItems        = 1000
	MaxEmailLength  = 320
	DefaultMaxPages = 100
	MaxMaxPages     = 10000
)

// ScanOptions in their canonical order; "all" stands for every one.
var ScanOptions = []string{"technologies", "headers", "tls", "dns", "security", "emails"}

// Request is one job asked for, normalized.
type Request struct {
	Kind     job.Kind
	URL      string
	Email    string
	Options  []string
	MaxPages int
	Force    bool
}

// Key identifies requests that may share one job: same kind, target and
// parameters.
func (r Request) Key() string {
	switch r.Kind {
	case job.Scan:
		return "scan|" + r.URL + "|" + strings.Join(r.Options, ",")
	case job.Sitemap:
		return fmt.Sprintf("sitemap|%s|%d", r.URL, r.MaxPages)
	default:
		return "email|" + r.Email
	}
}

// KeyOf is Key for a stored job document.
func KeyOf(j *job.Job) string {
	return Request{Kind: j.Kind, URL: j.URL, Email: j.Email, Options: j.Options, MaxPages: j.MaxPages}.Key()
}

// Endpoint says which body shape a POST takes.
type Endpoint int

const (
	ScanOne Endpoint = iota
	ScanMany
	SitemapOne
	EmailOne
	EmailMany
)

// fields lists the members each body may have; the first is required.
var fields = map[Endpoint][]string{
	ScanOne:    {"url", "force", "options"},
	ScanMany:   {"urls", "force", "options"},
	SitemapOne: {"url", "force", "max_pages"},
	EmailOne:   {"email", "force"},
	EmailMany:  {"emails", "force"},
}

// Decode validates body for endpoint and returns the requests in order.
// A malformed body yields a single error with field "" (the whole body).
func Decode(e Endpoint, body []byte, allowPrivate bool) ([]Request, []FieldError) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil || obj == nil {
		msg := "body must be a JSON object"
		if se, ok := err.(*json.SyntaxError); ok {
			msg = fmt.Sprintf("malformed JSON at byte %d: %s", se.Offset, se.Error())
		}
		return nil, []FieldError{{Field: "", Message: msg}}
	}
	d := decoder{obj: obj}
	allowed := fields[e]
	for _, name := range slices.Sorted(maps.Keys(obj)) {
		if !contains(allowed, name) {
			d.fail(name, "unknown field")
		}
	}
	required := allowed[0]
	if raw, ok := obj[required]; !ok || isNull(raw) {
		d.fail(required, "is required")
	}
	force := d.boolean("force")
	base := Request{Force: force}
	var out []Request
	switch e {
	case ScanOne, ScanMany:
		base.Kind = job.Scan
		base.Options = d.options()
		for _, t := range d.targets(e == ScanMany, "url", "urls") {
			if t.field == "" {
				continue
			}
			u, msg := URL(t.value, allowPrivate)
			if msg != "" {
				d.fail(t.field, msg)
				continue
			}
			r := base
			r.URL = u
			out = append(out, r)
		}
	case SitemapOne:
		base.Kind = job.Sitemap
		base.MaxPages = d.maxPages()
		for _, t := range d.targets(false, "url", "") {
			u, msg := URL(t.value, allowPrivate)
			if msg != "" {
				d.fail("url", msg)
				continue
			}
			r := base
			r.URL = u
			out = append(out, r)
		}
	case EmailOne, EmailMany:
		base.Kind = job.Email
		for _, t := range d.targets(e == EmailMany, "email", "emails") {
			if t.field == "" {
				continue
			}
			addr, msg := Email(t.value)
			if msg != "" {
				d.fail(t.field, msg)
				continue
			}
			r := base
			r.Email = addr
			out = append(out, r)
		}
	}
	if len(d.errs) > 0 {
		slices.SortStableFunc(d.errs, byItemIndex)
		return nil, d.errs
	}
	return out, nil
}

// Email checks the length rule of the contract and normalizes the domain
// (lower case). Bad syntax is not an error here: it is the job's result.
func Email(raw string) (string, string) {
	s := strings.TrimSpace(raw)
	n := utf8.RuneCountInString(s)
	switch {
	case n == 0:
		return "", "must not be empty"
	case n > MaxEmailLength:
		return "", "must be at most 320 characters"
	case !utf8.ValidString(s):
		return "", "must be valid UTF-8"
	}
	if at := strings.LastIndexByte(s, '@'); at >= 0 {
		s = s[:at+1] + strings.ToLower(s[at+1:])
	}
	return s, ""
}

type decoder struct {
	obj  map[string]json.RawMessage
	errs []FieldError
}

func (d *decoder) fail(field, msg string) {
	d.errs = append(d.errs, FieldError{Field: field, Message: msg})
}

// target is one string of the required field, with its field name.
type target struct {
	field string
	value string
}

// targets reads the required string or list of strings. Items of the wrong
// type are reported and left out; the caller validates the rest, so one
// answer lists every bad item.
func (d *decoder) targets(many bool, one, list string) []target {
	if !many {
		raw, ok := d.obj[one]
		if !ok || isNull(raw) {
			return nil
		}
		var s string
		if json.Unmarshal(raw, &s) != nil {
			d.fail(one, "must be a string")
			return nil
		}
		return []target{{one, s}}
	}
	raw, ok := d.obj[list]
	if !ok || isNull(raw) {
		return nil
	}
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		d.fail(list, "must be an array of strings")
		return nil
	}
	if len(items) == 0 || len(items) > MaxItems {
		d.fail(list, fmt.Sprintf("must have 1 to %d items (has %d)", MaxItems, len(items)))
		return nil
	}
	out := make([]target, len(items))
	for i, it := range items {
		out[i].field = fmt.Sprintf("%s[%d]", list, i)
		if isNull(it) || json.Unmarshal(it, &out[i].value) != nil {
			out[i].field = "" // reported here, skipped by the caller
			d.fail(fmt.Sprintf("%s[%d]", list, i), "must be a string")
		}
	}
	return out
}

func (d *decoder) boolean(name string) bool {
	raw, ok := d.obj[name]
	if !ok || isNull(raw) {
		return false
	}
	var b bool
	if json.Unmarshal(raw, &b) != nil {
		d.fail(name, "must be true, false or null")
	}
	return b
}

func (d *decoder) options() []string {
	raw, ok := d.obj["options"]
	if !ok || isNull(raw) {
		return []string{"technologies"}
	}
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		d.fail("options", "must be an array of strings or null")
		return nil
	}
	seen := map[string]bool{}
	for i, it := range items {
		var s string
		if json.Unmarshal(it, &s) != nil || isNull(it) {
			d.fail(fmt.Sprintf("options[%d]", i), "must be a string")
			continue
		}
		s = strings.ToLower(strings.TrimSpace(s))
		switch {
		case s == "all":
			for _, o := range ScanOptions {
				seen[o] = true
			}
		case contains(ScanOptions, s):
			seen[s] = true
		default:
			d.fail(fmt.Sprintf("options[%d]", i), fmt.Sprintf("unknown option %q (use %s or all)", s, strings.Join(ScanOptions, ", ")))
		}
	}
	if len(seen) == 0 {
		return []string{"technologies"}
	}
	out := make([]string, 0, len(seen))
	for _, o := range ScanOptions {
		if seen[o] {
			out = append(out, o)
		}
	}
	return out
}

func (d *decoder) maxPages() int {
	raw, ok := d.obj["max_pages"]
	if !ok || isNull(raw) {
		return DefaultMaxPages
	}
	var n int
	if err := json.Unmarshal(raw, &n); err != nil {
		d.fail("max_pages", "must be a whole number")
		return 0
	}
	if n < 1 || n > MaxMaxPages {
		d.fail("max_pages", fmt.Sprintf("must be from 1 to %d", MaxMaxPages))
	}
	return n
}

func isNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// byItemIndex orders errors of list items by their index ("urls[2]" before
// "urls[10]"); other fields keep their order.
func byItemIndex(a, b FieldError) int {
	ai, aok := itemIndex(a.Field)
	bi, bok := itemIndex(b.Field)
	if !aok || !bok {
		return 0
	}
	return ai - bi
}

func itemIndex(field string) (int, bool) {
	open := strings.IndexByte(field, '[')
	if open < 0 || !strings.HasSuffix(field, "]") {
		return 0, false
	}
	n, err := strconv.Atoi(field[open+1 : len(field)-1])
	return n, err == nil
}
