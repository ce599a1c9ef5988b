package api

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/surveyor/surveyor/pkg/fingerprint"
	"github.com/surveyor/surveyor/pkg/job"
	"github.com/surveyor/surveyor/services/ingest/internal/problem"
	"github.com/surveyor/surveyor/services/ingest/internal/schema"
	"github.com/surveyor/surveyor/services/ingest/internal/techapi"
	"github.com/surveyor/surveyor/services/ingest/internal/validate"
)

// The OpenAPI document is generated from the Go types of the documents and
// from package job's rules, and committed: a change to the API shows in
// review as a change to openapi.json, the file served is the file reviewed
// and linted, and a test fails while the two differ.
//
//go:generate go run ./openapigen

//go:embed openapi.json
var openAPI []byte

// OpenAPI returns the OpenAPI 3.1 document served at /openapi.json.
func OpenAPI() []byte { return openAPI }

// TargetURLFormat names the format of target URLs in the document: the
// rules of job.ParseTarget, which a JSON Schema cannot spell out.
const TargetURLFormat = "target-url"

// BuildOpenAPI generates the OpenAPI document.
func BuildOpenAPI() ([]byte, error) {
	b := &builder{schemas: schema.NewSet(map[reflect.Type]string{
		reflect.TypeFor[problem.Details](): "Problem",
		reflect.TypeFor[techapi.Summary](): "TechnologySummary",
		reflect.TypeFor[techapi.Detail]():  "TechnologyDetail",
		// problem.Details is "Problem" already.
		reflect.TypeFor[fingerprint.Problem](): "FingerprintProblem",
	})}
	doc := schema.O(
		"openapi", "3.1.0",
		"info", schema.O(
			"title", "Surveyor API",
			"version", "1.0.0",
			"description", "Technology scans, sitemap crawls and email validation as background jobs. "+
				"POST a job, get its id at once, GET it back. Errors are RFC 9457 problem details. "+
				"Request bodies take no other fields than those listed; answers may gain fields in later versions.",
			"license", schema.O("name", "Apache-2.0", "identifier", "Apache-2.0"),
		),
		"servers", []any{schema.O("url", "http://127.0.0.1:8080")},
	)
	b.components()
	doc.Set("paths", b.paths())
	doc.Set("components", schema.O(
		"schemas", b.schemas.Components(),
		"securitySchemes", schema.O("bearer", schema.O(
			"type", "http", "scheme", "bearer", "description", "a token of TECHNOLOGIES_API_TOKENS")),
	))
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

type builder struct {
	schemas *schema.Set
}

// ref is a reference to a component schema.
func ref(name string) *schema.Object { return schema.O("$ref", schema.Ref+name) }

// launchOp describes one of the five POSTs.
type launchOp struct {
	path, id, summary string
	endpoint          validate.Endpoint
	request           string // component name of the body
	answer            any
}

var launchOps = []launchOp{
	{"/v1/scans", "launchScans", fmt.Sprintf("Start technology scans of up to %d URLs", job.MaxItems), validate.ScanMany, "ScansRequest", ScansLaunch{}},
	{"/v1/scan", "launchScan", "Start a technology scan", validate.ScanOne, "ScanRequest", ScanLaunch{}},
	{"/v1/sitemap", "launchSitemap", "Start a sitemap crawl", validate.SitemapOne, "SitemapRequest", SitemapLaunch{}},
	{"/v1/emails/validate", "launchEmails", fmt.Sprintf("Validate up to %d email addresses", job.MaxItems), validate.EmailMany, "EmailsRequest", EmailsLaunch{}},
	{"/v1/email/validate", "launchEmail", "Validate an email address", validate.EmailOne, "EmailRequest", EmailLaunch{}},
}

// getOp describes the GET of one kind's job document.
type getOp struct {
	kind        job.Kind
	path, id    string
	summary     string
	component   string
	result      any
	progress    any // nil when the kind reports none
	targetField string
	params      []string // fields of the request, beside force
}

var getOps = []getOp{
	{job.Scan, "/v1/scan/{scan_id}", "getScan", "A scan job", "ScanJob", job.ScanResult{}, nil, "url", []string{"options"}},
	{job.Sitemap, "/v1/sitemap/{sitemap_id}", "getSitemap", "A sitemap job", "SitemapJob", job.SitemapResult{}, job.SitemapProgress{}, "url", []string{"max_pages"}},
	{job.Email, "/v1/email/validate/{job_id}", "getEmail", "An email validation job", "EmailJob", job.EmailResult{}, job.EmailProgress{}, "email", nil},
}

func (b *builder) paths() *schema.Object {
	paths := schema.O()
	for _, l := range launchOps {
		paths.Set(l.path, schema.O("post", schema.O(
			"operationId", l.id,
			"summary", l.summary,
			"security", []any{},
			"requestBody", schema.O("required", true, "content", schema.O("application/json", schema.O("schema", ref(l.request)))),
			"responses", responses(
				"200", jsonResponse("accepted (or an existing job returned)", b.schemas.Of(reflect.TypeOf(l.answer))),
				"400", problemResponse("malformed JSON, wrong type, missing or unknown field, or bad value; every bad field is listed in errors"),
				"405", wrongMethod,
				"413", tooLarge,
				"415", notJSON,
				"429", problemResponse("rate limit reached or job queue full", retryAfter),
				"500", internalError,
				"503", problemResponse("message bus unavailable; nothing was stored", retryAfter),
			),
		)))
	}
	for _, g := range getOps {
		paths.Set(g.path, schema.O("get", schema.O(
			"operationId", g.id,
			"summary", g.summary,
			"security", []any{},
			"parameters", []any{uuidParam(g.kind.IDField())},
			"responses", jobResponses(jsonResponse("the job document", ref(g.component)), "no job with this id and kind"),
		)))
	}
	paths.Set("/v1/sitemap/{sitemap_id}/sitemap.xml", schema.O("get", schema.O(
		"operationId", "getSitemapXML",
		"summary", "The sitemaps.org XML of a completed sitemap",
		"security", []any{},
		"parameters", []any{uuidParam(job.Sitemap.IDField())},
		"responses", jobResponses(schema.O("description", "sitemaps.org urlset of the indexable pages",
			"content", schema.O("application/xml", schema.O("schema", schema.O("type", "string")))),
			"no such sitemap, or not completed yet"),
	)))
	plain := func(id, summary string, ok *schema.Object, more ...any) *schema.Object {
		return schema.O("get", schema.O("operationId", id, "summary", summary, "security", []any{},
			"responses", responses(append([]any{"200", ok, "405", wrongMethod}, more...)...)))
	}
	paths.Set("/healthz", plain("healthz", "Liveness", jsonResponse("alive", ref("Status"))))
	paths.Set("/readyz", plain("readyz", "Readiness: NATS connected and streams ready",
		jsonResponse("ready", ref("Status")), "503", problemResponse("not ready")))
	paths.Set("/metrics", plain("metrics", "Prometheus metrics", schema.O("description", "Prometheus text exposition",
		"content", schema.O("text/plain", schema.O("schema", schema.O("type", "string"))))))
	paths.Set("/openapi.json", plain("openapi", "This document", jsonResponse("this document", schema.O("type", "object"))))
	b.technologyPaths(paths)
	return paths
}

// technologyPaths adds the /technologies area (contract §6), the only one
// that needs a bearer token.
func (b *builder) technologyPaths(paths *schema.Object) {
	bearer := []any{schema.O("bearer", []any{})}
	slug := schema.O("name", "slug", "in", "path", "required", true,
		"description", "lower-case letters, digits and inner dashes, as Wappalyzer makes them from the name",
		"schema", schema.O("type", "string", "pattern", "^[a-z0-9]+(-[a-z0-9]+)*$"))
	unauthorized := problemResponse("no valid bearer token", header("WWW-Authenticate", "Bearer", "string"))
	disabled := problemResponse("the area is disabled (TECHNOLOGIES_API_TOKENS is empty)")
	storeDown := problemResponse("the fingerprint store (JetStream) is unavailable; nothing was changed", retryAfter)
	detail := jsonResponse("the technology; a custom one carries its stored definition", ref("TechnologyDetail"))
	paths.Set("/technologies", schema.O("get", schema.O(
		"operationId", "listTechnologies",
		"summary", "The fingerprint database: built-in, FINGERPRINTS_DIR and custom technologies",
		"security", bearer,
		"responses", responses(
			"200", jsonResponse("every technology, sorted by name", ref("TechnologyList")),
			"401", unauthorized, "404", disabled, "405", wrongMethod, "503", storeDown),
	)))
	paths.Set(techapi.ReportPath, schema.O("get", schema.O(
		"operationId", "technologiesReport",
		"summary", "The load report of the fingerprint database scans use",
		"description", "Technologies and categories; patterns per kind (html, headers, ..., js, dom, xhr); "+
			"evaluated, the patterns every scan runs, of which backtracking (look-around, which RE2 refuses, run under a time limit); "+
			"not_evaluated (js, xhr and dom), of which needing_browser (js, xhr and dom properties); "+
			"and problems: what the loader merged or could not use as written, none of which stops the load.",
		"security", bearer,
		"responses", responses(
			"200", jsonResponse("the report of the built-in, FINGERPRINTS_DIR and custom technologies together",
				b.schemas.Of(reflect.TypeFor[fingerprint.LoadReport]())),
			"401", unauthorized, "404", disabled, "405", wrongMethod, "503", storeDown),
	)))
	paths.Set("/technologies/{slug}", schema.O(
		"get", schema.O(
			"operationId", "getTechnology",
			"summary", "One technology",
			"security", bearer,
			"parameters", []any{slug},
			"responses", responses(
				"200", detail,
				"401", unauthorized,
				"404", problemResponse("no technology with this slug, or the area is disabled"),
				"405", wrongMethod, "503", storeDown),
		),
		"put", schema.O(
			"operationId", "putTechnology",
			"summary", "Add or replace a custom technology",
			"description", "The body is a Wappalyzer-format object holding exactly one technology, whose slug must be the path's. "+
				"A custom technology with the slug or name of a built-in one replaces it. "+
				"Every scanner replica applies the change without a restart.",
			"security", bearer,
			"parameters", []any{slug},
			"requestBody", schema.O("required", true, "content", schema.O("application/json", schema.O("schema", ref("TechnologyDefinition")))),
			"responses", responses(
				"200", jsonResponse("replaced", ref("TechnologyDetail")),
				"201", jsonResponse("created", ref("TechnologyDetail"), header("Location", "the technology's path", "string")),
				"400", problemResponse("not one technology, a slug that differs from the path, or definitions that cannot be used; "+
					"each bad pattern is listed in errors as <name>.<field> with the reason"),
				"401", unauthorized, "404", disabled, "405", wrongMethod, "413", tooLarge, "415", notJSON, "503", storeDown),
		),
		"delete", schema.O(
			"operationId", "deleteTechnology",
			"summary", "Remove a custom technology",
			"description", "A built-in technology that a custom one replaced comes back.",
			"security", bearer,
			"parameters", []any{slug},
			"responses", responses(
				"204", schema.O("description", "removed"),
				"401", unauthorized,
				"404", problemResponse("no custom technology with this slug (built-in ones cannot be deleted), or the area is disabled"),
				"405", wrongMethod, "503", storeDown),
		),
	))
}

// components adds the schemas the paths refer to, in the order a reader
// wants them: errors, requests and their answers, job documents with
// their results, then the rest.
func (b *builder) components() {
	c := b.schemas.Components()
	b.schemas.Of(reflect.TypeFor[problem.Details]())
	for _, l := range launchOps {
		c.Set(l.request, requestSchema(l.endpoint))
	}
	for _, l := range launchOps {
		b.schemas.Of(reflect.TypeOf(l.answer))
	}
	for _, g := range getOps {
		c.Set(g.component, nil) // before the result types it refers to
		c.Set(g.component, b.jobSchema(g))
	}
	c.Set("Status", schema.O("type", "object", "required", []string{"status"},
		"properties", schema.O("status", schema.O("type", "string"))))
	b.schemas.Of(reflect.TypeFor[techapi.Summary]())
	c.Set("TechnologyList", schema.O("type", "object", "required", []string{"technologies"},
		"properties", schema.O("technologies", schema.O("type", "array", "items", ref("TechnologySummary")))))
	b.schemas.Of(reflect.TypeFor[techapi.Detail]())
	detail, _ := c.Get("TechnologyDetail")
	props, _ := detail.(*schema.Object).Get("properties")
	props.(*schema.Object).Set("definition", ref("TechnologyDefinition"))
	c.Set("TechnologyDefinition", schema.O(
		"type", "object",
		"description", `Wappalyzer technology format: {"Name": {...}} with exactly one technology.`,
		"minProperties", 1, "maxProperties", 1,
		"additionalProperties", ref("WappalyzerTechnology")))
	c.Set("WappalyzerTechnology", wappalyzerTechnology())
}

// requestSchema is the body of a launch: the fields validate.Decode reads
// for e, each with the rules of package job. Unknown fields are refused.
func requestSchema(e validate.Endpoint) *schema.Object {
	fields := e.Fields()
	props := schema.O()
	for _, f := range fields {
		props.Set(f, requestFields[f])
	}
	return schema.O("type", "object", "additionalProperties", false, "required", fields[:1], "properties", props)
}

var targetURL = schema.O(
	"type", "string",
	"minLength", 1,
	"maxLength", job.MaxURLLength,
	"format", TargetURLFormat,
	"description", "format "+TargetURLFormat+": an http or https URL; https:// is added when there is no scheme. "+
		"It needs a host name (letters, digits and hyphens; IDN allowed, converted to punycode) or an IP address, "+
		"and may carry no user info. At most "+strconv.Itoa(job.MaxURLLength)+" characters as sent and once normalized "+
		"(lower-case host, default port and fragment dropped). Loopback, private and other non-public IP addresses "+
		"and localhost are refused unless the server allows them (ALLOW_PRIVATE_TARGETS: all of them, or listed ranges). "+
		"Answers give the normalized URL.",
)

var emailAddress = schema.O(
	"type", "string",
	"minLength", 1,
	"maxLength", job.MaxEmailLength,
	"description", "any string: bad syntax is the validation's result (reachable: invalid), not a refused request. "+
		"Answers give it without surrounding white space and with its domain in lower case.",
)

// requestFields are the schemas of every field a launch may have.
var requestFields = map[string]*schema.Object{
	"url":    targetURL,
	"urls":   schema.O("type", "array", "minItems", 1, "maxItems", job.MaxItems, "items", targetURL),
	"email":  emailAddress,
	"emails": schema.O("type", "array", "minItems", 1, "maxItems", job.MaxItems, "items", emailAddress),
	"force": schema.O("type", []string{"boolean", "null"},
		"description", "start a new job even when an equal one is queued, running or finished within CACHE_TTL"),
	"options": schema.O("type", []string{"array", "null"},
		"description", fmt.Sprintf("the sections to add to the result; %q stands for every one, none means %q", job.AllOptions, job.DefaultOption),
		"items", schema.O("type", "string", "enum", append(job.Option.Enum(""), job.AllOptions))),
	"max_pages": schema.O("type", []string{"integer", "null"},
		"minimum", 1, "maximum", job.MaxMaxPages, "default", job.DefaultMaxPages,
		"description", "the most pages to fetch and list"),
}

// jobSchema is the job document of one kind: job.Job's fields that kind
// uses, its id under the kind's own name first, its result and progress.
func (b *builder) jobSchema(g getOp) *schema.Object {
	fields, always := b.schemas.Properties(reflect.TypeFor[job.Job]())
	id := g.kind.IDField()
	props := schema.O(id, schema.O("type", "string", "format", "uuid"))
	required := append([]string{id}, always...)
	for _, k := range fields.Keys() {
		p, _ := fields.Get(k)
		switch k {
		case "url", "email", "options", "max_pages":
			if k != g.targetField && !slices.Contains(g.params, k) {
				continue
			}
			required = append(required, k) // ingest always sets them
		case "progress":
			if g.progress == nil {
				continue
			}
			p = b.schemas.Of(reflect.TypeOf(g.progress))
		case "result":
			p = b.schemas.Of(reflect.TypeOf(g.result))
		}
		props.Set(k, p)
	}
	props.Set("kind", schema.O("type", "string", "enum", []string{string(g.kind)}))
	props.Set("attempts", schema.O("type", "integer", "minimum", 0))
	if slices.Contains(g.params, "options") {
		props.Set("options", schema.O("type", "array", "minItems", 1, "items", schema.O("type", "string", "enum", job.Option.Enum(""))))
	}
	if slices.Contains(g.params, "max_pages") {
		props.Set("max_pages", schema.O("type", "integer", "minimum", 1, "maximum", job.MaxMaxPages))
	}
	inOrder := slices.DeleteFunc(slices.Clone(props.Keys()), func(k string) bool { return !slices.Contains(required, k) })
	return schema.O("type", "object", "required", inOrder, "properties", props)
}

// Responses.

// responses makes a responses object of status, response pairs.
func responses(pairs ...any) *schema.Object { return schema.O(pairs...) }

func jsonResponse(description string, body *schema.Object, headers ...*schema.Object) *schema.Object {
	r := schema.O("description", description, "content", schema.O("application/json", schema.O("schema", body)))
	return withHeaders(r, headers)
}

func problemResponse(description string, headers ...*schema.Object) *schema.Object {
	r := schema.O("description", description, "content", schema.O("application/problem+json", schema.O("schema", ref("Problem"))))
	return withHeaders(r, headers)
}

// header is a response header: a one-member object of its name.
func header(name, description, typ string) *schema.Object {
	return schema.O(name, schema.O("description", description, "schema", schema.O("type", typ)))
}

func withHeaders(r *schema.Object, headers []*schema.Object) *schema.Object {
	if len(headers) == 0 {
		return r
	}
	all := schema.O()
	for _, h := range headers {
		for _, k := range h.Keys() {
			v, _ := h.Get(k)
			all.Set(k, v)
		}
	}
	return r.Set("headers", all)
}

var (
	retryAfter    = header("Retry-After", "seconds to wait before trying again", "integer")
	wrongMethod   = problemResponse("wrong method", header("Allow", "the methods this path takes", "string"))
	tooLarge      = problemResponse("body larger than 1 MiB")
	notJSON       = problemResponse("Content-Type is not application/json")
	internalError = problemResponse("internal error")
)

// jobResponses are the answers of a GET of a job's path.
func jobResponses(ok *schema.Object, notFound string) *schema.Object {
	return responses(
		"200", ok,
		"404", problemResponse(notFound),
		"405", wrongMethod,
		"500", internalError,
		"503", problemResponse("message bus unavailable", retryAfter),
	)
}

func uuidParam(name string) *schema.Object {
	return schema.O("name", name, "in", "path", "required", true, "schema", schema.O("type", "string", "format", "uuid"))
}

// wappalyzerTechnology is the input format of custom technologies, which
// package fingerprint reads; it is Wappalyzer's, not ours, and has no Go
// type of its own.
func wappalyzerTechnology() *schema.Object {
	oneOrMore := func(typ string) *schema.Object {
		return schema.O("oneOf", []any{schema.O("type", typ), schema.O("type", "array", "items", schema.O("type", typ))})
	}
	byName := schema.O("type", "object", "additionalProperties", oneOrMore("string"))
	browserOnly := schema.O("description", "needs a browser: stored and counted, not evaluated")
	props := schema.O(
		"cats", oneOrMore("integer"),
		"website", schema.O("type", "string"),
		"description", schema.O("type", "string"),
		"icon", schema.O("type", "string"),
		"cpe", schema.O("type", "string"),
		"headers", byName,
		"cookies", byName,
		"meta", byName,
		"dns", byName,
	)
	for _, k := range strings.Fields("html text css scriptSrc scripts url robots certIssuer implies excludes requires") {
		props.Set(k, oneOrMore("string"))
	}
	props.Set("requiresCategory", oneOrMore("integer"))
	for _, k := range []string{"js", "dom", "xhr"} {
		props.Set(k, browserOnly)
	}
	props.Set("probe", schema.O("description", "requests a scan does not make: ignored"))
	props.Set("saas", schema.O("type", "boolean"))
	props.Set("oss", schema.O("type", "boolean"))
	props.Set("pricing", schema.O("type", "array", "items", schema.O("type", "string")))
	return schema.O(
		"type", "object",
		"description", `Patterns are regular expressions (RE2 syntax; look-ahead and look-behind run on a backtracking engine under a time limit) `+
			`with optional \;version:\1 and \;confidence:50 attributes.`,
		"additionalProperties", false,
		"properties", props,
	)
}
