// Package validate turns the JSON bodies of ingest's POST requests into
// canonical job requests by the rules of package job, collecting every bad
// field so that one answer lists all of them.
package validate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/surveyor/surveyor/pkg/job"
	"github.com/surveyor/surveyor/pkg/netguard"
)

// FieldError names one bad field, as problem+json lists them.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
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

// Fields lists the members the body of e may have; the first is required.
func (e Endpoint) Fields() []string { return fields[e] }

var fields = map[Endpoint][]string{
	ScanOne:    {"url", "force", "options"},
	ScanMany:   {"urls", "force", "options"},
	SitemapOne: {"url", "force", "max_pages"},
	EmailOne:   {"email", "force"},
	EmailMany:  {"emails", "force"},
}

// Decode validates body for endpoint and returns the requests in order.
// A malformed body yields a single error with field "" (the whole body).
func Decode(e Endpoint, body []byte, targets netguard.Policy) ([]job.Request, []FieldError) {
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
		if !slices.Contains(allowed, name) {
			d.fail(name, "unknown field")
		}
	}
	required := allowed[0]
	if raw, ok := obj[required]; !ok || isNull(raw) {
		d.fail(required, "is required")
	}
	force := d.boolean("force")
	base := job.Request{Force: force}
	var out []job.Request
	switch e {
	case ScanOne, ScanMany:
		base.Kind = job.Scan
		base.Options = d.options()
		for _, t := range d.targets(e == ScanMany, "url", "urls") {
			if t.field == "" {
				continue
			}
			u, err := job.ParseTarget(t.value, targets)
			if err != nil {
				d.fail(t.field, err.Error())
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
			u, err := job.ParseTarget(t.value, targets)
			if err != nil {
				d.fail("url", err.Error())
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
			addr, err := job.NormalizeEmail(t.value)
			if err != nil {
				d.fail(t.field, err.Error())
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
	if len(items) == 0 || len(items) > job.MaxItems {
		d.fail(list, fmt.Sprintf("must have 1 to %d items (has %d)", job.MaxItems, len(items)))
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

// options reads the option names; what the scan gets is their canonical
// list.
func (d *decoder) options() []string {
	raw, ok := d.obj["options"]
	if !ok || isNull(raw) {
		return job.CanonicalOptions(nil)
	}
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		d.fail("options", "must be an array of strings or null")
		return nil
	}
	names := make([]string, 0, len(items))
	for i, it := range items {
		var s string
		if isNull(it) || json.Unmarshal(it, &s) != nil {
			d.fail(fmt.Sprintf("options[%d]", i), "must be a string")
			continue
		}
		if !job.IsOption(s) {
			d.fail(fmt.Sprintf("options[%d]", i), fmt.Sprintf("unknown option %q (use %s)", s, optionList))
			continue
		}
		names = append(names, s)
	}
	return job.CanonicalOptions(names)
}

// optionList names the options for an error message.
var optionList = strings.Join(job.Option.Enum(""), ", ") + " or " + job.AllOptions

func (d *decoder) maxPages() int {
	raw, ok := d.obj["max_pages"]
	if !ok || isNull(raw) {
		return job.DefaultMaxPages
	}
	n, ok := integer(raw)
	switch {
	case !ok:
		d.fail("max_pages", "must be a whole number")
	case n < 1 || n > job.MaxMaxPages:
		d.fail("max_pages", fmt.Sprintf("must be from 1 to %d", job.MaxMaxPages))
	}
	return int(n)
}

// integer reads a JSON number with no fractional part, however it is
// written (2, 2.0, 2e0), as JSON Schema's "integer" does. Values beyond
// int64 are clamped, which keeps them out of every range checked here.
func integer(raw json.RawMessage) (int64, bool) {
	var n int64
	if json.Unmarshal(raw, &n) == nil {
		return n, true
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '-' && (raw[0] < '0' || raw[0] > '9') {
		return 0, false // not a number: a JSON value starting so is one
	}
	r, ok := new(big.Rat).SetString(string(raw))
	if !ok || !r.IsInt() {
		return 0, false
	}
	if !r.Num().IsInt64() {
		return int64(r.Num().Sign()) * math.MaxInt64, true
	}
	return r.Num().Int64(), true
}

func isNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }

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
