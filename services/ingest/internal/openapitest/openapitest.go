// Package openapitest checks real HTTP answers, and request bodies, against
// ingest's OpenAPI document, so the document cannot drift from the code:
// every test that talks to the API validates what it got, and a test can
// demand that every operation was exercised.
package openapitest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/surveyor/surveyor/pkg/job"
	"github.com/surveyor/surveyor/pkg/netguard"
	"github.com/surveyor/surveyor/services/ingest/internal/api"
)

// Spec is a loaded OpenAPI 3.1 document.
type Spec struct {
	doc      map[string]any
	compiler *jsonschema.Compiler
	mu       sync.Mutex
	seen     map[string]bool
}

// Load parses document; its schemas are JSON Schema 2020-12 with formats
// asserted (a uuid must be a UUID), the target-url format by the rule
// ingest applies (job.ParseTarget, private targets refused).
func Load(t testing.TB, document []byte) *Spec {
	t.Helper()
	raw, err := jsonschema.UnmarshalJSON(bytes.NewReader(document))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.RegisterFormat(&jsonschema.Format{Name: api.TargetURLFormat, Validate: func(v any) error {
		s, ok := v.(string)
		if !ok {
			return nil // formats judge strings only
		}
		_, err := job.ParseTarget(s, netguard.PublicOnly)
		return err
	}})
	if err := c.AddResource("openapi.json", raw); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(document, &doc); err != nil {
		t.Fatal(err)
	}
	if doc["openapi"] != "3.1.0" {
		t.Fatalf("openapi %v, want 3.1.0", doc["openapi"])
	}
	return &Spec{doc: doc, compiler: c, seen: map[string]bool{}}
}

// Version is info.version.
func (s *Spec) Version() any { return s.doc["info"].(map[string]any)["version"] }

// ValidateRequest checks a JSON request body against the schema of what
// method on the path template takes; nil means the document accepts it.
func (s *Spec) ValidateRequest(t testing.TB, method, template string, body []byte) error {
	t.Helper()
	op, ok := s.operation(method, template)
	if !ok {
		t.Fatalf("OpenAPI has no %s %s", method, template)
	}
	media, _ := op["requestBody"].(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any)
	ref, _ := media["schema"].(map[string]any)["$ref"].(string)
	if ref == "" {
		t.Fatalf("%s %s takes no JSON body by reference", method, template)
	}
	return s.validate(t, ref, body)
}

// ValidateComponent checks a JSON document against the component schema
// of that name; nil means the document accepts it.
func (s *Spec) ValidateComponent(t testing.TB, name string, doc []byte) error {
	t.Helper()
	return s.validate(t, "#/components/schemas/"+name, doc)
}

func (s *Spec) validate(t testing.TB, ref string, doc []byte) error {
	t.Helper()
	sch, err := s.compiler.Compile("openapi.json" + ref)
	if err != nil {
		t.Fatalf("compile %s: %v", ref, err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return err
	}
	return sch.Validate(inst)
}

func (s *Spec) operation(method, template string) (map[string]any, bool) {
	path, _ := s.doc["paths"].(map[string]any)[template].(map[string]any)
	op, ok := path[strings.ToLower(method)].(map[string]any)
	return op, ok
}

// Check validates one answer to method on the path template: the status must
// be listed, its headers present, and a JSON body must match the schema.
func (s *Spec) Check(t testing.TB, method, template string, status int, header http.Header, body []byte) {
	t.Helper()
	m := strings.ToLower(method)
	op, ok := s.operation(method, template)
	if !ok {
		t.Errorf("OpenAPI has no %s %s", method, template)
		return
	}
	s.mu.Lock()
	s.seen[m+" "+template] = true
	s.mu.Unlock()
	code := fmt.Sprint(status)
	resp, ok := op["responses"].(map[string]any)[code].(map[string]any)
	if !ok {
		t.Errorf("OpenAPI lists no %s for %s %s", code, method, template)
		return
	}
	headers, _ := resp["headers"].(map[string]any)
	for name := range headers {
		if header.Get(name) == "" {
			t.Errorf("%s %s %s: header %s missing", method, template, code, name)
		}
	}
	content, _ := resp["content"].(map[string]any)
	if content == nil {
		if len(body) != 0 {
			t.Errorf("%s %s %s: OpenAPI says no body, got %.200s", method, template, code, body)
		}
		return
	}
	ctype := strings.TrimSpace(strings.Split(header.Get("Content-Type"), ";")[0])
	media, ok := content[ctype].(map[string]any)
	if !ok {
		t.Errorf("%s %s %s: OpenAPI has no content %q", method, template, code, ctype)
		return
	}
	ref, _ := media["schema"].(map[string]any)["$ref"].(string)
	if ref == "" || !strings.Contains(ctype, "json") {
		return
	}
	if err := s.validate(t, ref, body); err != nil {
		t.Errorf("%s %s %s does not match %s: %v\n%.500s", method, template, code, ref, err, body)
	}
}

// RequireCovered fails unless every operation on a path that include
// accepts was checked at least once.
func (s *Spec) RequireCovered(t testing.TB, include func(path string) bool) {
	t.Helper()
	for path, ops := range s.doc["paths"].(map[string]any) {
		if !include(path) {
			continue
		}
		for m := range ops.(map[string]any) {
			if !s.seen[m+" "+path] {
				t.Errorf("OpenAPI operation %s %s was never exercised", m, path)
			}
		}
	}
}
