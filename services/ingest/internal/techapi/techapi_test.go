package techapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/surveyor/surveyor/pkg/bus"
	"github.com/surveyor/surveyor/pkg/bus/bustest"
	"github.com/surveyor/surveyor/pkg/fingerprint"
	"github.com/surveyor/surveyor/pkg/techstore"
	"github.com/surveyor/surveyor/services/ingest/internal/api"
	"github.com/surveyor/surveyor/services/ingest/internal/openapitest"
	"github.com/surveyor/surveyor/services/ingest/internal/techapi"
)

const secret = "s3cret-token-of-some-length"

// server is ingest's real API with the /technologies area on a loopback
// port, on a real JetStream.
type server struct {
	t    *testing.T
	env  *bustest.Env
	base string
	spec *spec
}

func start(t *testing.T, tokens ...string) *server {
	t.Helper()
	return startOn(t, "", tokens...)
}

// startOn is start with dir as FINGERPRINTS_DIR.
func startOn(t *testing.T, dir string, tokens ...string) *server {
	t.Helper()
	env := bustest.Start(t, bus.Config{})
	store, err := techstore.Open(context.Background(), env.JS)
	if err != nil {
		t.Fatal(err)
	}
	base, _, err := techstore.Base(dir)
	if err != nil {
		t.Fatal(err)
	}
	a := &api.API{Technologies: techapi.New(tokens, store, base).Handler}
	srv := &fasthttp.Server{Handler: a.Handler, ErrorHandler: api.ErrorHandler, MaxRequestBodySize: api.MaxBody}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Shutdown() })
	return &server{t: t, env: env, base: "http://" + ln.Addr().String(), spec: loadSpec(t)}
}

type response struct {
	status int
	header http.Header
	body   []byte
	doc    map[string]any
}

// do sends a request with the given Authorization header ("" for none)
// and checks the answer against the OpenAPI document when template is set.
func (s *server) do(method, template, path, auth, ctype string, body string) response {
	s.t.Helper()
	req, _ := http.NewRequest(method, s.base+path, strings.NewReader(body))
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	r := response{status: res.StatusCode, header: res.Header, body: b}
	json.Unmarshal(b, &r.doc)
	if template != "" {
		s.spec.check(s.t, method, template, r)
	}
	return r
}

// call is do with the right token and a JSON body.
func (s *server) call(method, template, path, body string) response {
	s.t.Helper()
	ctype := ""
	if body != "" {
		ctype = "application/json"
	}
	return s.do(method, template, path, "Bearer "+secret, ctype, body)
}

func TestAuthentication(t *testing.T) {
	s := start(t, "another-token", secret)
	deny := []string{
		"",
		"Bearer",
		"Bearer wrong",
		"Bearer " + secret[:len(secret)-1],
		"Bearer " + secret + "x",
		"Basic " + secret,
		secret,
	}
	for _, auth := range deny {
		for _, p := range [][2]string{{"/technologies", "/technologies"}, {"/technologies/{slug}", "/technologies/nginx"}} {
			r := s.do("GET", p[0], p[1], auth, "", "")
			if r.status != 401 || !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") || r.header.Get("Content-Type") != "application/problem+json" {
				t.Errorf("GET %s with %q: %d %v %s", p[1], auth, r.status, r.header, r.body)
			}
		}
	}
	r := s.do("DELETE", "/technologies/{slug}", "/technologies/nginx", "Bearer wrong", "", "")
	if r.status != 401 {
		t.Errorf("DELETE with a wrong token: %d", r.status)
	}
	for _, auth := range []string{"Bearer " + secret, "bearer " + secret, "Bearer another-token", "  Bearer   " + secret + " "} {
		if r := s.do("GET", "/technologies", "/technologies", auth, "", ""); r.status != 200 {
			t.Errorf("GET with %q: %d %s", auth, r.status, r.body)
		}
	}
}

func TestDisabledWithoutTokens(t *testing.T) {
	s := start(t)
	for _, auth := range []string{"", "Bearer " + secret, "Bearer "} {
		r := s.do("GET", "/technologies", "/technologies", auth, "", "")
		if r.status != 404 {
			t.Fatalf("disabled area answered %d %s", r.status, r.body)
		}
	}
}

// TestTokensComparedInConstantTime reads authorized's source: every token
// must go through subtle.ConstantTimeCompare in a loop that cannot stop at
// the first match, so the answer's time does not tell which token, or how
// much of one, a caller guessed.
func TestTokensComparedInConstantTime(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "techapi.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var fn *ast.FuncDecl
	for _, d := range f.Decls {
		if d, ok := d.(*ast.FuncDecl); ok && d.Name.Name == "authorized" {
			fn = d
		}
	}
	if fn == nil {
		t.Fatal("no func authorized in techapi.go")
	}
	loops := 0
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		loop, ok := n.(*ast.RangeStmt)
		if !ok {
			return true
		}
		loops++
		compares := false
		ast.Inspect(loop.Body, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.ReturnStmt, *ast.BranchStmt:
				t.Errorf("the token loop can stop early: %T", n)
			case *ast.SelectorExpr:
				if x, ok := n.X.(*ast.Ident); ok && x.Name == "subtle" && n.Sel.Name == "ConstantTimeCompare" {
					compares = true
				}
			case *ast.BinaryExpr:
				if n.Op == token.EQL || n.Op == token.NEQ {
					t.Errorf("the token loop compares with %s", n.Op)
				}
			}
			return true
		})
		if !compares {
			t.Error("the token loop does not call subtle.ConstantTimeCompare")
		}
		return true
	})
	if loops != 1 {
		t.Fatalf("authorized has %d loops over tokens, want 1", loops)
	}
}

const acme = `{"Acme CMS": {"cats": [1], "website": "https://acme.example",
  "description": "A content management system.",
  "meta": {"generator": "^Acme CMS ([\\d.]+)\\;version:\\1"}, "implies": "PHP"}}`

func TestListGetPutDelete(t *testing.T) {
	s := start(t, secret)
	r := s.call("GET", "/technologies", "/technologies", "")
	list := r.doc["technologies"].([]any)
	if r.status != 200 || len(list) < 500 {
		t.Fatalf("list: %d, %d technologies", r.status, len(list))
	}
	nginx := find(list, "nginx")
	if nginx == nil || nginx["name"] != "Nginx" || nginx["custom"] != false || len(nginx["categories"].([]any)) == 0 {
		t.Fatalf("nginx in list: %v", nginx)
	}
	r = s.call("GET", techapi.ReportPath, techapi.ReportPath, "")
	if r.status != 200 || r.doc["technologies"] != float64(len(list)) || r.doc["problems"] != nil {
		t.Fatalf("report: %d %s", r.status, r.body)
	}
	if r := s.call("HEAD", "", "/technologies", ""); r.status != 200 || len(r.body) != 0 {
		t.Fatalf("HEAD: %d %d bytes", r.status, len(r.body))
	}
	r = s.call("GET", "/technologies/{slug}", "/technologies/nginx", "")
	if r.status != 200 || r.doc["name"] != "Nginx" || r.doc["custom"] != false || r.doc["definition"] != nil {
		t.Fatalf("get nginx: %d %s", r.status, r.body)
	}
	if r := s.call("GET", "/technologies/{slug}", "/technologies/acme-cms", ""); r.status != 404 {
		t.Fatalf("get before put: %d", r.status)
	}

	r = s.call("PUT", "/technologies/{slug}", "/technologies/acme-cms", acme)
	if r.status != 201 || r.header.Get("Location") != "/technologies/acme-cms" || r.doc["custom"] != true ||
		fmt.Sprint(r.doc["categories"]) != "[CMS]" || r.doc["description"] != "A content management system." {
		t.Fatalf("put: %d %v %s", r.status, r.header, r.body)
	}
	r = s.call("GET", "/technologies/{slug}", "/technologies/acme-cms", "")
	def, _ := r.doc["definition"].(map[string]any)
	if r.status != 200 || r.doc["custom"] != true || def["Acme CMS"] == nil {
		t.Fatalf("get after put: %d %s", r.status, r.body)
	}
	r = s.call("GET", "/technologies", "/technologies", "")
	if got := find(r.doc["technologies"].([]any), "acme-cms"); got == nil || got["custom"] != true || got["website"] != "https://acme.example" {
		t.Fatalf("acme-cms in list: %v", got)
	}
	r = s.call("PUT", "/technologies/{slug}", "/technologies/acme-cms", strings.Replace(acme, "acme.example", "acme.test", 1))
	if r.status != 200 || r.doc["website"] != "https://acme.test" {
		t.Fatalf("replace: %d %s", r.status, r.body)
	}

	// A custom technology may replace a built-in one; deleting it brings
	// the built-in one back.
	r = s.call("PUT", "/technologies/{slug}", "/technologies/nginx", `{"Nginx": {"cats": [22], "headers": {"X-Our-Nginx": ""}}}`)
	if r.status != 201 || r.doc["custom"] != true {
		t.Fatalf("override nginx: %d %s", r.status, r.body)
	}
	if r := s.call("GET", "/technologies/{slug}", "/technologies/nginx", ""); r.doc["custom"] != true {
		t.Fatalf("nginx after override: %s", r.body)
	}
	if r := s.call("DELETE", "/technologies/{slug}", "/technologies/nginx", ""); r.status != 204 || len(r.body) != 0 {
		t.Fatalf("delete override: %d %s", r.status, r.body)
	}
	if r := s.call("GET", "/technologies/{slug}", "/technologies/nginx", ""); r.status != 200 || r.doc["custom"] != false {
		t.Fatalf("nginx after delete: %d %s", r.status, r.body)
	}
	r = s.call("DELETE", "/technologies/{slug}", "/technologies/nginx", "")
	if r.status != 404 || !strings.Contains(r.doc["detail"].(string), "built-in") {
		t.Fatalf("delete built-in: %d %s", r.status, r.body)
	}

	if r := s.call("DELETE", "/technologies/{slug}", "/technologies/acme-cms", ""); r.status != 204 {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	if r := s.call("GET", "/technologies/{slug}", "/technologies/acme-cms", ""); r.status != 404 {
		t.Fatalf("get after delete: %d", r.status)
	}
	if r := s.call("DELETE", "/technologies/{slug}", "/technologies/acme-cms", ""); r.status != 404 {
		t.Fatalf("second delete: %d", r.status)
	}
	s.spec.requireAllCovered(t)
}

func TestRefusals(t *testing.T) {
	s := start(t, secret)
	cases := []struct {
		name, method, template, path, ctype, body string
		status                                    int
		fields                                    []string // errors[].field
		mention                                   []string // in detail or errors
	}{
		{"bad regex", "PUT", "/technologies/{slug}", "/technologies/broken", "application/json",
			`{"Broken": {"html": "<div class=\"x(", "headers": {"Server": "ok"}}}`, 400,
			[]string{"Broken.html"}, []string{`<div class=\"x(`, "missing closing )"}},
		{"two bad patterns", "PUT", "/technologies/{slug}", "/technologies/broken", "application/json",
			`{"Broken": {"scriptSrc": ["ok\\.js", "a[z-a]"], "cookies": {"sid": "(?P<"}}}`, 400,
			[]string{"Broken.cookies.sid", "Broken.scriptSrc"}, []string{"a[z-a]", "invalid character class range"}},
		{"unknown category", "PUT", "/technologies/{slug}", "/technologies/odd", "application/json",
			`{"Odd": {"cats": [99999], "headers": {"X-Odd": ""}}}`, 400, []string{"Odd.cats"}, []string{"99999", "no such category"}},
		{"implies what does not exist", "PUT", "/technologies/{slug}", "/technologies/odd", "application/json",
			`{"Odd": {"implies": "No Such Thing"}}`, 400, []string{"Odd.implies"}, []string{"No Such Thing"}},
		{"slug differs", "PUT", "/technologies/{slug}", "/technologies/other", "application/json", acme, 400, nil, []string{"acme-cms", "other"}},
		{"two technologies", "PUT", "/technologies/{slug}", "/technologies/a", "application/json", `{"A": {}, "B": {}}`, 400, nil, []string{"exactly one"}},
		{"malformed", "PUT", "/technologies/{slug}", "/technologies/a", "application/json", `{"A": `, 400, nil, []string{"JSON"}},
		{"not JSON", "PUT", "/technologies/{slug}", "/technologies/a", "text/plain", `{"A": {}}`, 415, nil, nil},
		// Just over the limit: the body still fits in the socket buffers, so
		// the client reads the 413 rather than a reset connection.
		{"too large", "PUT", "/technologies/{slug}", "/technologies/a", "application/json", `{"A": {"html": "` + strings.Repeat("x", 1<<20) + `"}}`, 413, nil, nil},
		{"POST on the list", "POST", "", "/technologies", "application/json", acme, 405, nil, nil},
		{"PATCH on one", "PATCH", "", "/technologies/a", "application/json", `{}`, 405, nil, nil},
		{"deeper path", "GET", "", "/technologies/a/b", "", "", 404, nil, nil},
		{"neighbour path", "GET", "", "/technologiesx", "", "", 404, nil, nil},
	}
	for _, c := range cases {
		r := s.do(c.method, c.template, c.path, "Bearer "+secret, c.ctype, c.body)
		if r.status != c.status || r.header.Get("Content-Type") != "application/problem+json" {
			t.Errorf("%s: %d %q %.300s, want %d problem+json", c.name, r.status, r.header.Get("Content-Type"), r.body, c.status)
			continue
		}
		var fields []string
		text := fmt.Sprint(r.doc["detail"])
		errs, _ := r.doc["errors"].([]any)
		for _, e := range errs {
			e := e.(map[string]any)
			fields = append(fields, e["field"].(string))
			text += " " + e["message"].(string)
		}
		if fmt.Sprint(fields) != fmt.Sprint(c.fields) {
			t.Errorf("%s: fields %v, want %v", c.name, fields, c.fields)
		}
		for _, m := range c.mention {
			if !strings.Contains(text, m) {
				t.Errorf("%s: %q does not mention %q", c.name, text, m)
			}
		}
		if c.status == 405 && r.header.Get("Allow") == "" {
			t.Errorf("%s: 405 without Allow", c.name)
		}
	}
	if r := s.call("GET", "/technologies", "/technologies", ""); find(r.doc["technologies"].([]any), "broken") != nil || find(r.doc["technologies"].([]any), "odd") != nil {
		t.Fatal("a refused definition was stored")
	}
}

// TestPutReachesReplicas: after PUT over HTTP, two watchers on their own
// connections (as two scanner replicas hold) detect the technology on a
// real page, and stop after DELETE.
func TestPutReachesReplicas(t *testing.T) {
	s := start(t, secret)
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, `<html><head><meta name="generator" content="Acme CMS 3.2"><title>x</title></head><body>hi</body></html>`)
	}))
	defer page.Close()
	ev := evidence(t, page.URL)
	base, _, _ := techstore.Base("")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	type replica struct {
		mu  sync.Mutex
		eng *fingerprint.Engine
	}
	replicas := make([]*replica, 2)
	for i := range replicas {
		rep := &replica{eng: fingerprint.NewEngine(base)}
		replicas[i] = rep
		_, js := s.env.Connect(t, fmt.Sprintf("replica-%d", i))
		store, err := techstore.Open(ctx, js)
		if err != nil {
			t.Fatal(err)
		}
		go store.Follow(ctx, func(custom *fingerprint.DB) {
			e := fingerprint.NewEngine(fingerprint.Merge(base, custom))
			rep.mu.Lock()
			rep.eng = e
			rep.mu.Unlock()
		})
	}
	version := func(rep *replica) (string, bool) {
		rep.mu.Lock()
		e := rep.eng
		rep.mu.Unlock()
		for _, d := range e.Analyze(ev) {
			if d.Slug == "acme-cms" {
				return d.Version, true
			}
		}
		return "", false
	}
	waitAll := func(what string, ok func(string, bool) bool) {
		t.Helper()
		for i, rep := range replicas {
			deadline := time.Now().Add(5 * time.Second)
			for !ok(version(rep)) {
				if time.Now().After(deadline) {
					t.Fatalf("replica %d: %s", i, what)
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
	}
	if r := s.call("PUT", "/technologies/{slug}", "/technologies/acme-cms", acme); r.status != 201 {
		t.Fatalf("put: %d %s", r.status, r.body)
	}
	waitAll("Acme CMS 3.2 not detected after PUT", func(v string, found bool) bool { return found && v == "3.2" })
	if r := s.call("DELETE", "/technologies/{slug}", "/technologies/acme-cms", ""); r.status != 204 {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	waitAll("Acme CMS still detected after DELETE", func(_ string, found bool) bool { return !found })
}

func evidence(t *testing.T, url string) *fingerprint.Evidence {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	ev := &fingerprint.Evidence{URL: url, Status: res.StatusCode, Headers: map[string][]string{}}
	for k, v := range res.Header {
		ev.Headers[strings.ToLower(k)] = v
	}
	fingerprint.ParseHTML(body, ev)
	return ev
}

func find(list []any, slug string) map[string]any {
	for _, it := range list {
		if m := it.(map[string]any); m["slug"] == slug {
			return m
		}
	}
	return nil
}

// spec adapts the shared OpenAPI checker to this file's response type.
type spec struct{ *openapitest.Spec }

func loadSpec(t *testing.T) *spec { return &spec{openapitest.Load(t, api.OpenAPI())} }

func (s *spec) check(t *testing.T, method, template string, r response) {
	t.Helper()
	s.Check(t, method, template, r.status, r.header, r.body)
}

// requireAllCovered fails unless every /technologies operation ran.
func (s *spec) requireAllCovered(t *testing.T) {
	t.Helper()
	s.RequireCovered(t, func(path string) bool { return strings.HasPrefix(path, techapi.Prefix) })
}

// TestReport: the load report of FINGERPRINTS_DIR on the built-in
// database, as scans use it, with what the loader merged or could not use,
// and custom technologies counted once stored.
func TestReport(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "f.json", `{
		"Fastspring": {"cats": [41], "scriptSrc": "sbl\\.onfastspring\\.com/"},
		"FastSpring": {"cats": [41], "html": "data-fsc-action=", "js": {"fastspring.builder": ""}, "saas": true},
		"Fancy Lib": {"cats": [59], "scriptSrc": "/fancy-lib(?!-ui)\\.js", "dom": {"div.fancy": {"properties": {"_fancy": ""}}}, "html": "fancy-lib\\;version:\\1"}
	}`)
	s := startOn(t, dir, secret)
	list := s.call("GET", "/technologies", "/technologies", "").doc["technologies"].([]any)
	r := s.call("GET", techapi.ReportPath, techapi.ReportPath, "")
	if r.status != 200 || r.doc["technologies"] != float64(len(list)) || r.doc["backtracking"].(float64) < 1 ||
		r.doc["needing_browser"].(float64) < 2 || r.doc["patterns"].(map[string]any)["js"].(float64) < 1 {
		t.Fatalf("report: %d %s", r.status, r.body)
	}
	var fields []string
	for _, p := range r.doc["problems"].([]any) {
		p := p.(map[string]any)
		fields = append(fields, fmt.Sprint(p["technology"], " ", p["field"]))
	}
	if strings.Join(fields, ", ") != "Fancy Lib html, Fastspring name" {
		t.Errorf("problems %v: want the version without a group and the merge of FastSpring", fields)
	}

	if r := s.call("PUT", "/technologies/{slug}", "/technologies/acme-cms", acme); r.status != 201 {
		t.Fatalf("put: %d %s", r.status, r.body)
	}
	if r := s.call("GET", techapi.ReportPath, techapi.ReportPath, ""); r.doc["technologies"] != float64(len(list)+1) {
		t.Errorf("report after a PUT: %s", r.body)
	}
	if r := s.do("GET", techapi.ReportPath, techapi.ReportPath, "", "", ""); r.status != 401 {
		t.Errorf("report without a token: %d", r.status)
	}
	if r := s.call("PUT", "", techapi.ReportPath, acme); r.status != 405 || r.header.Get("Allow") != "GET, HEAD" {
		t.Errorf("PUT on the report: %d %v", r.status, r.header)
	}
}

func writeFile(t *testing.T, dir, name, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}
