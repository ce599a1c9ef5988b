package api_test

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/surveyor/surveyor/pkg/bus"
	"github.com/surveyor/surveyor/services/ingest/internal/api"
	"github.com/surveyor/surveyor/services/ingest/internal/ratelimit"
)

// A full job queue answers 429 with Retry-After, and accepts again once
// workers have caught up.
func TestFullQueueAnswers429UntilWorkersCatchUp(t *testing.T) {
	s := startWith(t, bus.Config{JobsMaxMsgs: 3}, false, nil)
	for _, u := range []string{"q1.example", "q2.example", "q3.example"} {
		if r, _ := s.call("POST", "/v1/scan", "/v1/scan", map[string]any{"url": u}); r.status != 200 {
			t.Fatalf("POST %s: %d %s", u, r.status, r.body)
		}
	}
	r, _ := s.call("POST", "/v1/scan", "/v1/scan", map[string]any{"url": "q4.example"})
	if r.status != 429 || r.header.Get("Retry-After") == "" {
		t.Fatalf("POST into a full queue: %d %s (Retry-After %q)", r.status, r.body, r.header.Get("Retry-After"))
	}
	// A refused request must not leave a job to be shared by its repeat.
	s.startWorkers(context.Background())
	deadline := time.Now().Add(10 * time.Second)
	for {
		r, doc := s.call("POST", "/v1/scan", "/v1/scan", map[string]any{"url": "q4.example"})
		if r.status == 200 {
			if doc["deduplicated"] != false {
				t.Fatalf("the refused job was shared: %s", r.body)
			}
			s.waitDone("/v1/scan/{scan_id}", "/v1/scan/"+doc["scan_id"].(string))
			return
		}
		if r.status != 429 || time.Now().After(deadline) {
			t.Fatalf("after workers caught up: %d %s", r.status, r.body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// RATE_LIMIT: a client over its bucket gets 429 with Retry-After while
// another client is still served.
func TestRateLimitPerClient(t *testing.T) {
	lim := ratelimit.New(1, nil) // 1/s, bursts of 2
	var other bool
	s := startWith(t, bus.Config{}, false, func(a *api.API) {
		a.Limit = func(c *fasthttp.RequestCtx) bool {
			peer, _ := netip.AddrFromSlice(c.RemoteIP())
			if other {
				peer = netip.MustParseAddr("198.51.100.9")
			}
			return lim.Allow(lim.Client(peer.Unmap(), ""), time.Now())
		}
	})
	codes := []int{}
	for i := range 3 {
		r, _ := s.call("POST", "/v1/email/validate", "/v1/email/validate", map[string]any{"email": "a@rate.example", "force": i > 0})
		codes = append(codes, r.status)
		if r.status == 429 && r.header.Get("Retry-After") == "" {
			t.Fatal("429 without Retry-After")
		}
	}
	if codes[0] != 200 || codes[1] != 200 || codes[2] != 429 {
		t.Fatalf("statuses %v, want [200 200 429]", codes)
	}
	other = true
	if r, _ := s.call("POST", "/v1/email/validate", "/v1/email/validate", map[string]any{"email": "a@rate.example", "force": true}); r.status != 200 {
		t.Fatalf("another client was limited too: %d", r.status)
	}
	if r := s.do("GET", "/healthz", "", nil); r.status != 200 {
		t.Fatalf("GETs are not rate limited: %d", r.status)
	}
}
