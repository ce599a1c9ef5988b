package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/surveyor/surveyor/pkg/job"
	"github.com/surveyor/surveyor/pkg/netguard"
	"github.com/surveyor/surveyor/services/ingest/internal/api"
	"github.com/surveyor/surveyor/services/ingest/internal/openapitest"
	"github.com/surveyor/surveyor/services/ingest/internal/validate"
)

func TestOpenAPIDocumentIsCurrent(t *testing.T) {
	doc, err := api.BuildOpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(doc, api.OpenAPI()) {
		t.Fatal("openapi.json is not what the code generates: run go generate ./services/ingest/internal/api")
	}
}

// launches pairs each POST path with the body validate.Decode reads there.
var launches = []struct {
	path     string
	endpoint validate.Endpoint
}{
	{"/v1/scans", validate.ScanMany},
	{"/v1/scan", validate.ScanOne},
	{"/v1/sitemap", validate.SitemapOne},
	{"/v1/emails/validate", validate.EmailMany},
	{"/v1/email/validate", validate.EmailOne},
}

// TestSchemaAgreesWithValidation sends many generated bodies to both
// judges, the request schema of the OpenAPI document and ingest's own
// validation: each must accept exactly what the other accepts.
func TestSchemaAgreesWithValidation(t *testing.T) {
	spec := openapitest.Load(t, api.OpenAPI())
	for _, l := range launches {
		accepted, refused := 0, 0
		for _, body := range requestBodies(l.endpoint) {
			schemaErr := spec.ValidateRequest(t, "POST", l.path, body)
			_, errs := validate.Decode(l.endpoint, body, netguard.PublicOnly)
			switch {
			case schemaErr == nil && len(errs) > 0:
				t.Errorf("POST %s %.300s: the schema accepts it, validation refuses it: %v", l.path, body, errs)
			case schemaErr != nil && len(errs) == 0:
				t.Errorf("POST %s %.300s: validation accepts it, the schema refuses it: %v", l.path, body, schemaErr)
			case len(errs) == 0:
				accepted++
			default:
				refused++
			}
		}
		if accepted < 20 || refused < 50 {
			t.Errorf("POST %s: %d bodies accepted, %d refused; the table is too thin to compare", l.path, accepted, refused)
		}
	}
}

// requestBodies generates bodies for endpoint e: a valid base, then every
// field in turn missing, null, of every JSON type, at and past its
// bounds, and with the values its rules are about; plus bodies that are
// not objects, malformed, or carry unknown fields.
func requestBodies(e validate.Endpoint) [][]byte {
	fields := e.Fields()
	base := map[string]any{}
	for _, f := range fields {
		base[f] = validValue[f]
	}
	var out [][]byte
	add := func(m map[string]any) {
		b, err := json.Marshal(m)
		if err != nil {
			panic(err)
		}
		out = append(out, b)
	}
	with := func(field string, v any) map[string]any {
		m := map[string]any{}
		for k, x := range base {
			m[k] = x
		}
		if v == absent {
			delete(m, field)
		} else {
			m[field] = v
		}
		return m
	}
	add(base)
	for _, f := range fields {
		for _, v := range append(anyJSON(), fieldValues(f)...) {
			add(with(f, v))
		}
	}
	// Two fields wrong at once, and fields that belong to other endpoints.
	add(with(fields[0], nil))
	for _, other := range []string{"url", "urls", "email", "emails", "options", "max_pages", "force", "extra", "URL", ""} {
		if !contains(fields, other) {
			add(with(other, validValue[other]))
		}
	}
	m := with(fields[0], 42)
	m["force"] = "yes"
	add(m)
	for _, raw := range []string{``, `{`, `[]`, `null`, `"x"`, `1`, `true`, `{}`, `{"` + fields[0] + `":}`,
		string(out[0]) + ` x`, string(out[0]) + `{}`, ` ` + string(out[0]) + "\n",
		`{"` + fields[0] + `":` + jsonOf(validValue[fields[0]]) + `,"` + fields[0] + `":null}`,
		`{"` + fields[0] + `":null,"` + fields[0] + `":` + jsonOf(validValue[fields[0]]) + `}`} {
		out = append(out, []byte(raw))
	}
	return out
}

// absent stands for a field left out.
var absent = new(int)

var validValue = map[string]any{
	"url":       "example.com",
	"urls":      []any{"example.com", "example.org"},
	"email":     "someone@example.com",
	"emails":    []any{"a@example.com", "not an address"},
	"force":     true,
	"options":   []any{"tls"},
	"max_pages": 50,
	"extra":     1,
	"URL":       "example.com",
	"":          1,
}

// anyJSON is one value of every JSON type, and absence.
func anyJSON() []any {
	return []any{absent, nil, true, false, 0, 1, -1, 2.5, "", "x", []any{}, map[string]any{}, []any{nil}, []any{1}, []any{"x"}}
}

// urlValues are targets good and bad, as the rules of job.ParseTarget see
// them (the format the schema names).
var urlValues = []any{
	"example.com", "https://example.com", "http://example.com:8080/a?b=c#d", "  Example.COM/x  ", "bücher.de",
	"https://93.184.215.14/", "https://[2606:4700::1111]/", "example.com:443", "https://example.com.",
	"", " ", "\t\n", "ftp://example.com/", "mailto:a@example.com", "javascript:alert(1)", "https://",
	"https:///x", "https://user:pw@example.com/", "https://exa mple.com/", "https://example.com:0/",
	"https://example.com:65536/", "http://10.0.0.1/", "http://127.0.0.1/", "http://[::1]/", "http://localhost/",
	"http://app.localhost:3000/", "http://169.254.169.254/", "http://[fe80::1%25eth0]/", "http://127.1/",
	"https://my_host.example/", "https://-x.example/", "https://xn--zz.example/", "https://a..b/",
	"https://example.com/" + strings.Repeat("a", job.MaxURLLength-20), "https://example.com/" + strings.Repeat("a", job.MaxURLLength-19),
	"https://example.com/" + strings.Repeat("é", job.MaxURLLength-20), strings.Repeat(" ", job.MaxURLLength) + "x",
	"https://example.com/" + strings.Repeat("a", job.MaxURLLength-20) + " ",
}

// emailValues are targets of every length rule: any string of 1 to 320
// characters is one, syntax aside.
var emailValues = []any{
	"a@example.com", " Bob@Example.COM ", "not an address", "@", "a@", " ", "\n", "\u00a0", "用户@例子.广告",
	strings.Repeat("a", job.MaxEmailLength), strings.Repeat("a", job.MaxEmailLength+1),
	strings.Repeat("é", job.MaxEmailLength), strings.Repeat("é", job.MaxEmailLength+1),
	" " + strings.Repeat("a", job.MaxEmailLength-1), " " + strings.Repeat("a", job.MaxEmailLength), "\ufffd",
}

// fieldValues are the values field's rules are about.
func fieldValues(field string) []any {
	switch field {
	case "url":
		return urlValues
	case "email":
		return emailValues
	case "urls", "emails":
		items := urlValues
		if field == "emails" {
			items = emailValues
		}
		var out []any
		for _, v := range items {
			out = append(out, []any{v}, []any{validValue[field].([]any)[0], v})
		}
		return append(out, list(job.MaxItems, items[0]), list(job.MaxItems+1, items[0]), []any{items[0], nil},
			[]any{items[0], []any{items[0]}}, items[0])
	case "options":
		var out []any
		for _, o := range job.ScanOptions {
			out = append(out, []any{string(o)}, []any{string(o), string(o)})
		}
		return append(out, []any{job.AllOptions}, []any{"dns", job.AllOptions}, []any{"TLS"}, []any{" tls"},
			[]any{"screenshots"}, []any{"tls", "screenshots"}, []any{"tls", nil}, "tls", list(50, "dns"))
	case "max_pages":
		return []any{0, 1, job.DefaultMaxPages, job.MaxMaxPages, job.MaxMaxPages + 1, -5, json.Number("1.0"),
			json.Number("2.5"), json.Number("1e2"), json.Number("1e4"), json.Number("1.0001e4"), json.Number("-0"),
			json.Number("1e400"), json.Number("100.000000000000000000001"), json.Number("9223372036854775808"), "9"}
	}
	return nil
}

func list(n int, v any) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestEveryResultFieldIsInTheSchema fills every field of each document
// type and checks that the document validates and that the schema declares
// every member it has, at every depth.
func TestEveryResultFieldIsInTheSchema(t *testing.T) {
	spec := openapitest.Load(t, api.OpenAPI())
	var doc map[string]any
	if err := json.Unmarshal(api.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	components := doc["components"].(map[string]any)["schemas"].(map[string]any)
	for name, v := range map[string]any{
		"ScanResult": &job.ScanResult{}, "SitemapResult": &job.SitemapResult{}, "EmailResult": &job.EmailResult{},
		"SitemapProgress": &job.SitemapProgress{}, "EmailProgress": &job.EmailProgress{},
	} {
		fill(reflect.ValueOf(v).Elem())
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := spec.ValidateComponent(t, name, data); err != nil {
			t.Errorf("a full %s does not validate: %v\n%s", name, err, data)
		}
		var inst any
		json.Unmarshal(data, &inst)
		for _, missing := range undeclared(components, components[name].(map[string]any), inst, name) {
			t.Errorf("%s is not in the schema", missing)
		}
	}
}

// fill gives every field of v a value that is not its zero: one element
// in every list and map, the first value of an enumerated string.
func fill(v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i))
			}
		}
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem())
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0))
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		e := reflect.New(v.Type().Elem()).Elem()
		fill(e)
		m.SetMapIndex(reflect.ValueOf("key").Convert(v.Type().Key()), e)
		v.Set(m)
	case reflect.String:
		if e, ok := v.Interface().(interface{ Enum() []string }); ok {
			v.SetString(e.Enum()[0])
		} else {
			v.SetString("x")
		}
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(1)
	default:
		panic(fmt.Sprintf("fill: %v", v.Type()))
	}
}

// undeclared lists the members of inst, at path, that schema s does not
// declare: a property an object schema lacks, at any depth.
func undeclared(components, s map[string]any, inst any, path string) []string {
	if ref, ok := s["$ref"].(string); ok {
		return undeclared(components, components[strings.TrimPrefix(ref, "#/components/schemas/")].(map[string]any), inst, path)
	}
	if alts, ok := s["anyOf"].([]any); ok {
		for _, a := range alts {
			if got := undeclared(components, a.(map[string]any), inst, path); len(got) == 0 {
				return nil
			}
		}
	}
	var out []string
	switch inst := inst.(type) {
	case map[string]any:
		props, _ := s["properties"].(map[string]any)
		extra, _ := s["additionalProperties"].(map[string]any)
		for k, v := range inst {
			sub, ok := props[k].(map[string]any)
			if !ok {
				sub = extra
			}
			if sub == nil {
				out = append(out, path+"."+k)
				continue
			}
			out = append(out, undeclared(components, sub, v, path+"."+k)...)
		}
	case []any:
		items, _ := s["items"].(map[string]any)
		for i, v := range inst {
			if items == nil {
				out = append(out, fmt.Sprintf("%s[%d]", path, i))
				continue
			}
			out = append(out, undeclared(components, items, v, fmt.Sprintf("%s[%d]", path, i))...)
		}
	}
	return out
}

// TestLaunchIDFields holds the launch answers to the id names of the job
// documents (job.Kind.IDField), which struct tags cannot refer to.
func TestLaunchIDFields(t *testing.T) {
	for v, k := range map[any]job.Kind{
		api.ScanLaunch{}: job.Scan, api.ScansLaunchItem{}: job.Scan, api.SitemapLaunch{}: job.Sitemap,
		api.EmailLaunch{}: job.Email, api.EmailsLaunchItem{}: job.Email,
	} {
		data, _ := json.Marshal(v)
		var m map[string]any
		json.Unmarshal(data, &m)
		if _, ok := m[k.IDField()]; !ok {
			t.Errorf("%T has no %s: %s", v, k.IDField(), data)
		}
	}
}
