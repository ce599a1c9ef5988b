package job

import (
	"encoding/json"
	"testing"
)

// The result document carries the contract's field names.
func TestSitemapResultJSONFields(t *testing.T) {
	r := SitemapResult{Pages: []SitemapPage{{URL: "https://example.com/", Status: 200}}, RobotsTxt: RobotsTxt{Sitemaps: []string{}}}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"pages", "page_count", "truncated", "excluded", "robots_txt"} {
		if _, ok := m[k]; !ok {
			t.Errorf("result lacks %q: %s", k, b)
		}
	}
	page := m["pages"].([]any)[0].(map[string]any)
	for _, k := range []string{"url", "status", "title", "depth", "content_type", "lastmod", "source"} {
		if _, ok := page[k]; !ok {
			t.Errorf("page lacks %q: %s", k, b)
		}
	}
	ex := m["excluded"].(map[string]any)
	for _, k := range []string{"robots", "noindex", "out_of_scope", "errors"} {
		if _, ok := ex[k]; !ok {
			t.Errorf("excluded lacks %q: %s", k, b)
		}
	}
	rt := m["robots_txt"].(map[string]any)
	if _, ok := rt["found"]; !ok {
		t.Errorf("robots_txt lacks found: %s", b)
	}
	if s, ok := rt["sitemaps"].([]any); !ok || s == nil {
		t.Errorf("robots_txt.sitemaps is not a list: %s", b)
	}
}
