package api_test

import (
	"testing"

	"github.com/surveyor/surveyor/pkg/bus"
	"github.com/surveyor/surveyor/pkg/netguard"
	"github.com/surveyor/surveyor/services/ingest/internal/api"
)

// With ALLOW_PRIVATE_TARGETS a list, ingest takes IP literals inside the
// listed ranges and refuses every other non-public one, on every URL
// endpoint.
func TestTargetsListAtIntake(t *testing.T) {
	targets, err := netguard.ParsePolicy("127.0.0.2/32,10.20.0.0/16,fd00:1::/48")
	if err != nil {
		t.Fatal(err)
	}
	s := startWith(t, bus.Config{}, false, func(a *api.API) { a.Targets = targets })
	for _, c := range []struct {
		url    string
		status int
	}{
		{"http://127.0.0.2:8080/", 200},
		{"http://10.20.3.4/", 200},
		{"http://[fd00:1::5]/", 200},
		{"http://[::ffff:127.0.0.2]/", 200},
		{"http://127.0.0.1:8080/", 400},
		{"http://[::ffff:127.0.0.1]/", 400},
		{"http://10.21.0.1/", 400},
		{"http://169.254.169.254/", 400},
		{"http://[fd00:2::5]/", 400},
		{"http://localhost/", 400}, // localhost is 127.0.0.1, outside the list
		{"http://93.184.215.14/", 200},
	} {
		for _, ep := range []string{"/v1/scan", "/v1/sitemap"} {
			r, _ := s.call("POST", ep, ep, map[string]any{"url": c.url})
			if r.status != c.status {
				t.Errorf("POST %s %s: %d %s, want %d", ep, c.url, r.status, r.body, c.status)
			}
		}
	}
	r, doc := s.call("POST", "/v1/scans", "/v1/scans", map[string]any{"urls": []string{"10.20.0.1", "10.0.0.1"}})
	errs, _ := doc["errors"].([]any)
	if r.status != 400 || len(errs) != 1 || errs[0].(map[string]any)["field"] != "urls[1]" {
		t.Errorf("POST /v1/scans with 10.0.0.1 second: %d %s, want 400 naming urls[1] only", r.status, r.body)
	}
}
