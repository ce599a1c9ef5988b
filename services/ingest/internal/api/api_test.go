package api_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/surveyor/surveyor/pkg/bus"
	"github.com/surveyor/surveyor/pkg/bus/bustest"
	"github.com/surveyor/surveyor/pkg/job"
	"github.com/surveyor/surveyor/pkg/jobstore"
	"github.com/surveyor/surveyor/pkg/worker"
	"github.com/surveyor/surveyor/services/ingest/internal/api"
	"github.com/surveyor/surveyor/services/ingest/internal/intake"
	"github.com/surveyor/surveyor/services/ingest/internal/openapitest"
)

// system is ingest plus a worker for every kind, on a real JetStream.
type system struct {
	t    *testing.T
	env  *bustest.Env
	base string
	spec *spec
}

// handler answers each kind with a small result derived from the job.
func handler(ctx context.Context, j *job.Job, p worker.Progress) (any, error) {
	switch j.Kind {
	case job.Scan:
		return job.ScanResult{FinalURL: j.URL, HTTPStatus: 200, Title: "Hello", Redirects: []string{},
			Technologies: []job.Technology{{Name: "Nginx", Slug: "nginx", Categories: []string{"Web servers"}, Confidence: 100}}}, nil
	case job.Sitemap:
		return job.SitemapResult{PageCount: 2, Pages: []job.SitemapPage{
			{URL: j.URL, Status: 200, ContentType: "text/html", Source: job.FromStart, Indexable: true},
			{URL: j.URL + "a&b", Status: 200, ContentType: "text/html", Source: job.FromLink, Indexable: true},
			{URL: j.URL + "hidden", Status: 200, ContentType: "text/html", Source: job.FromLink, Noindex: true},
		}}, nil
	default:
		return job.EmailResult{Reachable: job.ReachableUnknown}, nil
	}
}

func start(t *testing.T, withWorkers bool) *system {
	return startWith(t, bus.Config{}, withWorkers, nil)
}

// startWith lets a test set the stream limits and, through set, the
// API's own settings (rate limiter, target policy).
func startWith(t *testing.T, cfg bus.Config, withWorkers bool, set func(*api.API)) *system {
	env := bustest.Start(t, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	store, err := jobstore.Open(ctx, env.JS)
	if err != nil {
		t.Fatal(err)
	}
	in := intake.New(env.JS, store, intake.Config{CacheTTL: time.Hour, ResultTTL: time.Hour})
	go in.Run(ctx)
	a := &api.API{Jobs: in, Ready: func() error {
		if !env.Conn.IsConnected() {
			return fmt.Errorf("nats down")
		}
		return nil
	}}
	if set != nil {
		set(a)
	}
	srv := a.Server()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Shutdown() })
	s := &system{t: t, env: env, base: "http://" + ln.Addr().String(), spec: loadSpec(t)}
	if withWorkers {
		s.startWorkers(ctx)
	}
	return s
}

// startWorkers runs a worker of every kind until the test ends.
func (s *system) startWorkers(ctx context.Context) {
	t, env := s.t, s.env
	ctx, cancel := context.WithCancel(ctx)
	{
		var wg sync.WaitGroup
		for _, k := range job.Kinds {
			_, js := env.Connect(t, string(k))
			wstore, _ := jobstore.Open(ctx, js)
			rt := worker.New(js, wstore, worker.Config{Kind: k, Concurrency: 4}, worker.HandlerFunc(handler))
			wg.Add(1)
			go func() { defer wg.Done(); rt.Run(ctx) }()
		}
		t.Cleanup(func() { cancel(); wg.Wait() })
	}
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (s *system) do(method, path, ctype string, body []byte) response {
	s.t.Helper()
	req, _ := http.NewRequest(method, s.base+path, bytes.NewReader(body))
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return response{res.StatusCode, res.Header, b}
}

// call sends a request and checks the answer against the OpenAPI document.
func (s *system) call(method, template, path string, body any) (response, map[string]any) {
	s.t.Helper()
	var data []byte
	ctype := ""
	if body != nil {
		data, _ = json.Marshal(body)
		ctype = "application/json"
	}
	r := s.do(method, path, ctype, data)
	s.spec.check(s.t, method, template, r)
	var doc map[string]any
	json.Unmarshal(r.body, &doc)
	return r, doc
}

func (s *system) waitDone(template, path string) map[string]any {
	s.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		r, doc := s.call("GET", template, path, nil)
		if r.status != 200 {
			s.t.Fatalf("GET %s: %d %s", path, r.status, r.body)
		}
		if doc["status"] == "completed" || doc["status"] == "failed" {
			return doc
		}
		time.Sleep(30 * time.Millisecond)
	}
	s.t.Fatalf("%s did not finish", path)
	return nil
}

func TestEveryEndpointEndToEnd(t *testing.T) {
	s := start(t, true)
	r, scan := s.call("POST", "/v1/scan", "/v1/scan", map[string]any{"url": "Example.COM/x#top", "options": []string{"tls", "headers"}})
	if r.status != 200 || scan["url"] != "https://example.com/x" || scan["status"] != "queued" || scan["deduplicated"] != false {
		t.Fatalf("scan launch: %d %s", r.status, r.body)
	}
	doc := s.waitDone("/v1/scan/{scan_id}", "/v1/scan/"+scan["scan_id"].(string))
	if doc["status"] != "completed" || doc["attempts"] != 1.0 || doc["result"].(map[string]any)["final_url"] != "https://example.com/x" {
		t.Fatalf("scan job: %v", doc)
	}
	if got := doc["options"].([]any); len(got) != 2 || got[0] != "headers" || got[1] != "tls" {
		t.Fatalf("options not normalized: %v", got)
	}

	r, scans := s.call("POST", "/v1/scans", "/v1/scans", map[string]any{"urls": []string{"b.example", "c.example", "b.example/"}})
	list := scans["scans"].([]any)
	if r.status != 200 || len(list) != 3 {
		t.Fatalf("scans launch: %d %s", r.status, r.body)
	}
	first, third := list[0].(map[string]any), list[2].(map[string]any)
	if first["scan_id"] != third["scan_id"] || first["url"] != "https://b.example/" || list[1].(map[string]any)["url"] != "https://c.example/" {
		t.Fatalf("repeats in one request must share a job, order kept: %s", r.body)
	}
	for _, it := range list {
		s.waitDone("/v1/scan/{scan_id}", "/v1/scan/"+it.(map[string]any)["scan_id"].(string))
	}

	r, sm := s.call("POST", "/v1/sitemap", "/v1/sitemap", map[string]any{"url": "https://site.example/", "max_pages": 50})
	if r.status != 200 || sm["max_pages"] != 50.0 {
		t.Fatalf("sitemap launch: %d %s", r.status, r.body)
	}
	id := sm["sitemap_id"].(string)
	r, _ = s.call("GET", "/v1/sitemap/{sitemap_id}/sitemap.xml", "/v1/sitemap/"+id+"/sitemap.xml", nil)
	if r.status != 200 && r.status != 404 {
		t.Fatalf("sitemap.xml before completion: %d", r.status)
	}
	doc = s.waitDone("/v1/sitemap/{sitemap_id}", "/v1/sitemap/"+id)
	if doc["result"].(map[string]any)["page_count"] != 2.0 {
		t.Fatalf("sitemap job: %v", doc)
	}
	r, _ = s.call("GET", "/v1/sitemap/{sitemap_id}/sitemap.xml", "/v1/sitemap/"+id+"/sitemap.xml", nil)
	var set struct {
		URLs []struct {
			Loc string `xml:"loc"`
		} `xml:"url"`
	}
	if r.status != 200 || xml.Unmarshal(r.body, &set) != nil || len(set.URLs) != 2 || set.URLs[1].Loc != "https://site.example/a&b" {
		t.Fatalf("sitemap.xml: %d %s", r.status, r.body)
	}

	r, em := s.call("POST", "/v1/email/validate", "/v1/email/validate", map[string]any{"email": " Someone@Example.ORG "})
	if r.status != 200 || em["email"] != "Someone@example.org" {
		t.Fatalf("email launch: %d %s", r.status, r.body)
	}
	doc = s.waitDone("/v1/email/validate/{job_id}", "/v1/email/validate/"+em["job_id"].(string))
	if doc["result"].(map[string]any)["reachable"] != "unknown" {
		t.Fatalf("email job: %v", doc)
	}
	r, ems := s.call("POST", "/v1/emails/validate", "/v1/emails/validate", map[string]any{"emails": []string{"a@x.example", "not-an-address", "\n"}})
	jobs := ems["jobs"].([]any)
	if r.status != 200 || len(jobs) != 3 || jobs[1].(map[string]any)["email"] != "not-an-address" || jobs[2].(map[string]any)["email"] != "\n" {
		t.Fatalf("emails launch (any string of 1..320 characters is an address to validate): %d %s", r.status, r.body)
	}

	for _, p := range []string{"/healthz", "/readyz", "/metrics", "/openapi.json"} {
		if r, _ := s.call("GET", p, p, nil); r.status != 200 {
			t.Fatalf("GET %s: %d", p, r.status)
		}
	}
	r, _ = s.call("GET", "/metrics", "/metrics", nil)
	for _, want := range []string{`surveyor_jobs_accepted_total{kind="scan"}`, `surveyor_http_requests_total{route="/v1/scan",status="200"}`, "surveyor_queue_depth"} {
		if !bytes.Contains(r.body, []byte(want)) {
			t.Errorf("metrics lack %s", want)
		}
	}
	s.spec.requireAllCovered(t, "/technologies")
}

func TestDedupAndForce(t *testing.T) {
	s := start(t, false) // no workers: jobs stay queued
	_, a := s.call("POST", "/v1/scan", "/v1/scan", map[string]any{"url": "dedup.example"})
	_, b := s.call("POST", "/v1/scan", "/v1/scan", map[string]any{"url": "https://dedup.example/", "force": nil})
	if a["scan_id"] != b["scan_id"] || b["deduplicated"] != true || a["deduplicated"] != false {
		t.Fatalf("repeat not deduplicated: %v %v", a, b)
	}
	_, c := s.call("POST", "/v1/scan", "/v1/scan", map[string]any{"url": "dedup.example", "options": []string{"tls"}})
	if c["scan_id"] == a["scan_id"] {
		t.Fatal("different options shared a job")
	}
	_, d := s.call("POST", "/v1/scan", "/v1/scan", map[string]any{"url": "dedup.example", "force": true})
	if d["scan_id"] == a["scan_id"] || d["deduplicated"] != false {
		t.Fatalf("force did not start a new job: %v", d)
	}
	// After a forced job, repeats share the newest job.
	_, e := s.call("POST", "/v1/scan", "/v1/scan", map[string]any{"url": "dedup.example"})
	if e["scan_id"] != d["scan_id"] {
		t.Fatalf("repeat after force got %v, want %v", e["scan_id"], d["scan_id"])
	}
	_, m1 := s.call("POST", "/v1/sitemap", "/v1/sitemap", map[string]any{"url": "dedup.example", "max_pages": 10})
	_, m2 := s.call("POST", "/v1/sitemap", "/v1/sitemap", map[string]any{"url": "dedup.example", "max_pages": 20})
	if m1["sitemap_id"] == m2["sitemap_id"] {
		t.Fatal("different max_pages shared a job")
	}
	stream, _ := s.env.JS.Stream(context.Background(), bus.JobsStream)
	info, _ := stream.Info(context.Background())
	if info.State.Msgs != 5 {
		t.Fatalf("JOBS holds %d messages, want 5 (a, c, d, m1, m2)", info.State.Msgs)
	}
	if eta := a["estimated_time_seconds"].(float64); eta <= 0 {
		t.Fatalf("queued job estimated at %v s", eta)
	}
}

func TestFinishedJobAnswersRepeatsWithZeroEstimate(t *testing.T) {
	s := start(t, true)
	_, a := s.call("POST", "/v1/email/validate", "/v1/email/validate", map[string]any{"email": "x@done.example"})
	s.waitDone("/v1/email/validate/{job_id}", "/v1/email/validate/"+a["job_id"].(string))
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		_, b := s.call("POST", "/v1/email/validate", "/v1/email/validate", map[string]any{"email": "x@done.example"})
		if b["job_id"] != a["job_id"] {
			t.Fatalf("finished job within CACHE_TTL not reused: %v", b)
		}
		if b["status"] == "completed" {
			if b["estimated_time_seconds"] != 0.0 || b["deduplicated"] != true {
				t.Fatalf("%v", b)
			}
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("index never saw the job complete")
}

func TestErrors(t *testing.T) {
	s := start(t, false)
	cases := []struct {
		method, template, path, ctype string
		body                          []byte
		status                        int
		fields                        []string
	}{
		{"GET", "", "/nope", "", nil, 404, nil},
		{"GET", "/v1/scan/{scan_id}", "/v1/scan/00000000-0000-4000-8000-000000000000", "", nil, 404, nil},
		{"GET", "/v1/scan/{scan_id}", "/v1/scan/not-a-uuid", "", nil, 404, nil},
		{"DELETE", "", "/v1/scan/00000000-0000-4000-8000-000000000000", "", nil, 405, nil},
		{"GET", "", "/v1/scan", "", nil, 405, nil},
		{"POST", "/v1/scan", "/v1/scan", "text/plain", []byte(`{"url":"a.com"}`), 415, nil},
		{"POST", "/v1/scan", "/v1/scan", "", []byte(`{"url":"a.com"}`), 415, nil},
		{"POST", "/v1/scan", "/v1/scan", "application/json", []byte(`{"url": `), 400, nil},
		{"POST", "/v1/scan", "/v1/scan", "application/json; charset=utf-8", []byte(`{"url":"a.com","force":1,"x":true}`), 400, []string{"x", "force"}},
		{"POST", "/v1/scans", "/v1/scans", "application/json", []byte(`{"urls":["a.com","10.0.0.1","ftp://b"]}`), 400, []string{"urls[1]", "urls[2]"}},
		{"POST", "/v1/sitemap", "/v1/sitemap", "application/json", []byte(`{"url":"a.com","max_pages":0}`), 400, []string{"max_pages"}},
		{"POST", "/v1/emails/validate", "/v1/emails/validate", "application/json", []byte(`{"emails":[]}`), 400, []string{"emails"}},
		{"POST", "/v1/email/validate", "/v1/email/validate", "application/json", []byte(`{"email":5}`), 400, []string{"email"}},
		{"POST", "/v1/scan", "/v1/scan", "application/json", []byte(`{"url":""}`), 400, []string{"url"}},
		{"POST", "/v1/scan", "/v1/scan", "application/json", []byte(`{"url":"a.com","options":["TLS"]}`), 400, []string{"options[0]"}},
	}
	for _, c := range cases {
		r := s.do(c.method, c.path, c.ctype, c.body)
		if r.status != c.status || r.header.Get("Content-Type") != "application/problem+json" {
			t.Errorf("%s %s: %d %q %s, want %d problem+json", c.method, c.path, r.status, r.header.Get("Content-Type"), r.body, c.status)
			continue
		}
		if c.template != "" {
			s.spec.check(t, c.method, c.template, r)
		}
		var p struct {
			Status int
			Errors []struct{ Field string }
		}
		json.Unmarshal(r.body, &p)
		if p.Status != c.status {
			t.Errorf("%s %s: problem status %d", c.method, c.path, p.Status)
		}
		var fields []string
		for _, e := range p.Errors {
			fields = append(fields, e.Field)
		}
		if fmt.Sprint(fields) != fmt.Sprint(c.fields) {
			t.Errorf("%s %s: fields %v, want %v", c.method, c.path, fields, c.fields)
		}
		if c.status == 405 && r.header.Get("Allow") == "" {
			t.Errorf("%s %s: 405 without Allow", c.method, c.path)
		}
	}
}

// A body over 1 MiB is refused from its Content-Length, before it is read.
// Only the headers are sent: a client still writing a 2 MiB body when the
// server answers and closes could see a reset instead of the answer.
func TestBodyTooLarge(t *testing.T) {
	s := start(t, false)
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /v1/scans HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{\"urls\":[", 2<<20)
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	r := response{res.StatusCode, res.Header, body}
	if r.status != 413 {
		t.Fatalf("2 MiB body: %d %s", r.status, body)
	}
	s.spec.check(t, "POST", "/v1/scans", r)
}

func TestNATSDownAnswers503Quickly(t *testing.T) {
	s := start(t, false)
	s.env.Server.Shutdown()
	for _, p := range []string{"/v1/scan", "/v1/email/validate"} {
		body := `{"url":"down.example"}`
		if strings.Contains(p, "email") {
			body = `{"email":"a@down.example"}`
		}
		began := time.Now()
		r := s.do("POST", p, "application/json", []byte(body))
		if r.status != 503 || r.header.Get("Retry-After") == "" {
			t.Fatalf("POST %s with NATS down: %d %s", p, r.status, r.body)
		}
		if took := time.Since(began); took > 2500*time.Millisecond {
			t.Fatalf("503 took %s", took)
		}
		s.spec.check(t, "POST", p, r)
	}
	if r := s.do("GET", "/readyz", "", nil); r.status != 503 {
		t.Fatalf("readyz with NATS down: %d", r.status)
	}
}

// spec adapts the shared OpenAPI checker to this file's response type.
type spec struct{ *openapitest.Spec }

func loadSpec(t *testing.T) *spec {
	sp := openapitest.Load(t, api.OpenAPI())
	if sp.Version() != "1.0.0" {
		t.Fatalf("info.version %v, want 1.0.0", sp.Version())
	}
	return &spec{sp}
}

func (s *spec) check(t *testing.T, method, template string, r response) {
	t.Helper()
	s.Check(t, method, template, r.status, r.header, r.body)
}

// requireAllCovered fails unless every operation outside skipPrefixes ran.
func (s *spec) requireAllCovered(t *testing.T, skipPrefixes ...string) {
	t.Helper()
	s.RequireCovered(t, func(path string) bool {
		for _, p := range skipPrefixes {
			if strings.HasPrefix(path, p) {
				return false
			}
		}
		return true
	})
}
