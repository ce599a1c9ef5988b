//go:build faults

package faults

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-smtp"
	"github.com/miekg/dns"
)

// Every endpoint through the real binaries: ingest with its embedded NATS
// and the three workers, against a loopback website, DNS server and mail
// server — what a newcomer does with make run and curl.
func TestEveryEndpointWithRealWorkers(t *testing.T) {
	site := siteServer(t)
	dnsAddr := dnsServer(t)
	smtpPort := smtpServer(t)

	natsPort, httpPort := freePort(t), freePort(t)
	api := fmt.Sprintf("http://127.0.0.1:%d", httpPort)
	env := []string{
		fmt.Sprintf("NATS_URL=nats://127.0.0.1:%d", natsPort), "ALLOW_PRIVATE_TARGETS=true", "LOG_LEVEL=warn",
		"DNS_SERVER=" + dnsAddr, fmt.Sprintf("SMTP_PORT=%d", smtpPort), "SMTP_HELO=probe.surveyor.test",
	}
	start(t, "ingest", filepath.Join(binDir(t), "ingest"), append(env, "EMBEDDED_NATS=true",
		"DATA_DIR="+t.TempDir(), fmt.Sprintf("HTTP_ADDR=127.0.0.1:%d", httpPort)))
	waitReady(t, api+"/readyz")
	metrics := []string{api + "/metrics"}
	for _, w := range []string{"scanner", "sitemapper", "emailcheck"} {
		admin := fmt.Sprintf("http://127.0.0.1:%d", freePort(t))
		start(t, w, filepath.Join(binDir(t), w), append(env, "ADMIN_ADDR="+strings.TrimPrefix(admin, "http://")))
		waitReady(t, admin+"/readyz")
		metrics = append(metrics, admin+"/metrics")
	}

	post := func(path, body string) map[string]any {
		t.Helper()
		res, err := http.Post(api+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode != 200 {
			t.Fatalf("POST %s: %d %s", path, res.StatusCode, b)
		}
		var doc map[string]any
		json.Unmarshal(b, &doc)
		return doc
	}
	done := func(path string) map[string]any {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for time.Now().Before(deadline) {
			res, err := http.Get(api + path)
			if err != nil {
				t.Fatal(err)
			}
			var doc map[string]any
			json.NewDecoder(res.Body).Decode(&doc)
			res.Body.Close()
			if doc["status"] == "completed" {
				return doc
			}
			if doc["status"] == "failed" {
				t.Fatalf("GET %s: failed: %v", path, doc["error"])
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("GET %s: not completed in time", path)
		return nil
	}

	// Scan: the engine names the server and the CMS with their versions.
	scan := post("/v1/scan", fmt.Sprintf(`{"url": %q, "options": ["technologies", "headers", "security"]}`, site.URL+"/"))
	res := done("/v1/scan/" + scan["scan_id"].(string))["result"].(map[string]any)
	techs := map[string]string{}
	for _, tech := range res["technologies"].([]any) {
		m := tech.(map[string]any)
		v, _ := m["version"].(string)
		techs[m["name"].(string)] = v
	}
	if techs["Nginx"] != "1.25.3" || techs["WordPress"] != "6.4.2" {
		t.Errorf("scan found %v, want Nginx 1.25.3 and WordPress 6.4.2", techs)
	}
	if res["security"] == nil || res["headers"] == nil {
		t.Errorf("scan options missing: %v", res)
	}
	many := post("/v1/scans", fmt.Sprintf(`{"urls": [%q, %q]}`, site.URL+"/about", site.URL+"/contact"))
	for _, s := range many["scans"].([]any) {
		done("/v1/scan/" + s.(map[string]any)["scan_id"].(string))
	}

	// Sitemap: the crawl finds the linked and the sitemap-only pages, and
	// the XML lists the indexable ones.
	sm := post("/v1/sitemap", fmt.Sprintf(`{"url": %q, "max_pages": 20}`, site.URL+"/"))
	id := sm["sitemap_id"].(string)
	smres := done("/v1/sitemap/" + id)["result"].(map[string]any)
	if n := smres["page_count"].(float64); n < 4 {
		t.Errorf("crawl found %v pages, want at least 4: %v", n, smres["pages"])
	}
	xres, err := http.Get(api + "/v1/sitemap/" + id + "/sitemap.xml")
	if err != nil {
		t.Fatal(err)
	}
	xml, _ := io.ReadAll(xres.Body)
	xres.Body.Close()
	if xres.StatusCode != 200 || !strings.Contains(string(xml), site.URL+"/orphan") || strings.Contains(string(xml), "/private") {
		t.Errorf("sitemap.xml %d:\n%s", xres.StatusCode, xml)
	}

	// Email: a real SMTP conversation decides.
	verdicts := map[string]string{"alice@mail.test": "safe", "nobody@mail.test": "invalid", "bad address": "invalid", "x@nomail.test": "invalid"}
	for addr, want := range verdicts {
		job := post("/v1/email/validate", fmt.Sprintf(`{"email": %q}`, addr))
		got := done("/v1/email/validate/" + job["job_id"].(string))["result"].(map[string]any)["reachable"]
		if got != want {
			t.Errorf("%s: reachable %v, want %s", addr, got, want)
		}
	}
	batch := post("/v1/emails/validate", `{"emails": ["alice@mail.test", "bob@mail.test"]}`)
	for _, j := range batch["jobs"].([]any) {
		done("/v1/email/validate/" + j.(map[string]any)["job_id"].(string))
	}

	// A scan of a closed port fails and is dead-lettered; a repeated
	// request is deduplicated. Then every metric of the README is exported.
	closed := fmt.Sprintf("http://127.0.0.1:%d/", freePort(t))
	failing := post("/v1/scan", fmt.Sprintf(`{"url": %q}`, closed))
	if again := post("/v1/scan", fmt.Sprintf(`{"url": %q}`, closed)); again["deduplicated"] != true {
		t.Errorf("a repeated scan was not deduplicated: %v", again)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		var doc map[string]any
		if res, err := http.Get(api + "/v1/scan/" + failing["scan_id"].(string)); err == nil {
			json.NewDecoder(res.Body).Decode(&doc)
			res.Body.Close()
		}
		if doc["status"] == "failed" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the scan of a closed port did not fail in time: %v", doc)
		}
	}
	checkMetrics(t, metrics)
}

// siteServer is a small WordPress-on-nginx site with robots.txt and a
// sitemap that lists an orphan page.
func siteServer(t *testing.T) *httptest.Server {
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Server", "nginx/1.25.3")
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprintf(w, "User-agent: *\nDisallow: /private\nSitemap: %s/sitemap.xml\n", srv.URL)
			return
		case "/sitemap.xml":
			w.Header().Set("Content-Type", "application/xml")
			fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>%s/orphan</loc><lastmod>2026-10-01</lastmod></url></urlset>`, srv.URL)
			return
		case "/", "/about", "/contact", "/orphan", "/private":
		default:
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html><head><title>Page %s</title>
<meta name="generator" content="WordPress 6.4.2">
<link rel="stylesheet" href="/wp-content/themes/twentytwentyfour/style.css?ver=1.0">
<script src="/wp-includes/js/jquery/jquery.min.js?ver=3.7.1"></script></head>
<body><a href="/about">About</a> <a href="/contact">Contact</a> <a href="/private">Private</a></body></html>`, r.URL.Path)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// dnsServer answers for mail.test (MX to 127.0.0.1) and nothing else.
func dnsServer(t *testing.T) string {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mux := dns.NewServeMux()
	mux.HandleFunc(".", func(w dns.ResponseWriter, q *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(q)
		name := strings.ToLower(q.Question[0].Name)
		switch {
		case name == "mail.test." && q.Question[0].Qtype == dns.TypeMX:
			rr, _ := dns.NewRR("mail.test. 60 IN MX 10 mx.mail.test.")
			m.Answer = append(m.Answer, rr)
		case name == "mx.mail.test." && q.Question[0].Qtype == dns.TypeA:
			rr, _ := dns.NewRR("mx.mail.test. 60 IN A 127.0.0.1")
			m.Answer = append(m.Answer, rr)
		case name == "mail.test." || name == "mx.mail.test.":
			// the name exists, without records of this type
		default:
			m.Rcode = dns.RcodeNameError
		}
		w.WriteMsg(m)
	})
	srv := &dns.Server{PacketConn: pc, Handler: mux}
	go srv.ActivateAndServe()
	t.Cleanup(func() { srv.Shutdown() })
	return pc.LocalAddr().String()
}

// smtpServer accepts mail for alice and bob at mail.test only.
func smtpServer(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) { return &mailbox{}, nil }))
	s.Domain = "mx.mail.test"
	s.AllowInsecureAuth = true
	go s.Serve(ln)
	t.Cleanup(func() { s.Close() })
	return ln.Addr().(*net.TCPAddr).Port
}

type mailbox struct{}

func (*mailbox) Reset()        {}
func (*mailbox) Logout() error { return nil }
func (*mailbox) AuthPlain(string, string) error {
	return errors.New("no auth")
}
func (*mailbox) Mail(string, *smtp.MailOptions) error { return nil }
func (*mailbox) Rcpt(to string, _ *smtp.RcptOptions) error {
	switch strings.ToLower(to) {
	case "alice@mail.test", "bob@mail.test":
		return nil
	}
	return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "no such user"}
}
func (*mailbox) Data(io.Reader) error { return errors.New("DATA is never sent by a probe") }
