package scan

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/surveyor/surveyor/pkg/netguard"
	"github.com/surveyor/surveyor/pkg/worker"
)

// wordpressPage is shaped like what WordPress 6 behind nginx sends.
const wordpressPage = `<!DOCTYPE html>
<html lang="en-US">
<head>
<meta charset="UTF-8" />
<meta name="viewport" content="width=device-width, initial-scale=1" />
<title>Acme Widgets &#8211; Widgets for everyone</title>
<link rel='stylesheet' id='wp-block-library-css' href='https://site.test/wp-includes/css/dist/block-library/style.min.css?ver=6.4.2' media='all' />
<script src="https://site.test/wp-includes/js/jquery/jquery.min.js?ver=3.7.1" id="jquery-core-js"></script>
<script src="/wp-content/plugins/contact-form-7/includes/js/jquery-3.7.1.min.js"></script>
<link rel="https://api.w.org/" href="https://site.test/wp-json/" />
<meta name="generator" content="WordPress 6.4.2" />
</head>
<body class="home page-template-default">
<h1>Acme Widgets</h1>
<p>Contact us at hello [at] site [dot] test or <a href="mailto:sales@acme.example">sales</a>.</p>
<img src="/wp-content/uploads/2024/01/logo@2x.png" alt="">
</body>
</html>`

func wordpressHandler(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Server", "nginx/1.25.3")
	w.Header().Set("X-Powered-By", "PHP/8.2.13")
	w.Header().Set("Content-Type", "text/html; charset=UTF-8")
	w.Header().Set("Link", `<https://site.test/wp-json/>; rel="https://api.w.org/"`)
	http.SetCookie(w, &http.Cookie{Name: "PHPSESSID", Value: "abc123", Path: "/"})
	fmt.Fprint(w, wordpressPage)
}

func TestWordPressPage(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(wordpressHandler))
	defer srv.Close()
	h := newHarness(t)
	res, err := h.scan(at(srv, "site.test") + "/")
	if err != nil {
		t.Fatal(err)
	}
	if res.HTTPStatus != 200 || res.IP != "127.0.0.1" || res.FinalURL != at(srv, "site.test")+"/" {
		t.Errorf("status %d ip %q final %q", res.HTTPStatus, res.IP, res.FinalURL)
	}
	if res.Title != "Acme Widgets – Widgets for everyone" {
		t.Errorf("title %q", res.Title)
	}
	want := map[string]string{"WordPress": "6.4.2", "Nginx": "1.25.3", "PHP": "8.2.13", "jQuery": "3.7.1"}
	for name, version := range want {
		d, ok := techByName(res, name)
		if !ok {
			t.Errorf("%s not detected in %+v", name, res.Technologies)
		} else if d.Version != version {
			t.Errorf("%s version %q, want %q", name, d.Version, version)
		}
	}
	if _, ok := techByName(res, "Shopify"); ok {
		t.Error("Shopify detected on a WordPress page")
	}
	if res.Headers != nil || res.Security != nil || res.Emails != nil {
		t.Error("sections present that the job did not ask for")
	}
}

func TestTLSAndHTTP2(t *testing.T) {
	var proto atomic.Value
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proto.Store(r.Proto)
		wordpressHandler(w, r)
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()

	h := newHarness(t)
	h.trust(srv)
	res, err := h.scan(at(srv, "example.com")+"/", "tls", "technologies")
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := proto.Load().(string); p != "HTTP/2.0" {
		t.Errorf("server saw %q, want HTTP/2.0", p)
	}
	tl := res.TLS
	if tl == nil {
		t.Fatal("no tls section")
	}
	if !tl.Verified || tl.VerifyError != "" || tl.Protocol != "TLS 1.3" || tl.Cipher == "" {
		t.Errorf("tls %+v", tl)
	}
	if !slices.Contains(tl.DNSNames, "example.com") || tl.NotAfter.Before(tl.NotBefore) || !strings.Contains(tl.Issuer, "Acme Co") {
		t.Errorf("certificate fields %+v", tl)
	}
	if _, ok := techByName(res, "WordPress"); !ok {
		t.Error("page over HTTP/2 not analysed")
	}

	// Without trusting the test CA the scan still completes, unverified.
	h.cfg.RootCAs = nil
	res, err = h.scan(at(srv, "example.com")+"/", "tls")
	if err != nil {
		t.Fatal(err)
	}
	if res.TLS.Verified || !strings.Contains(res.TLS.VerifyError, "unknown authority") {
		t.Errorf("untrusted certificate: %+v", res.TLS)
	}
	// A name the certificate does not cover fails verification too.
	h.trust(srv)
	res, err = h.scan(at(srv, "site.test")+"/", "tls")
	if err != nil {
		t.Fatal(err)
	}
	if res.TLS.Verified || !strings.Contains(res.TLS.VerifyError, "site.test") {
		t.Errorf("wrong name: %+v", res.TLS)
	}
	if !res.TLS.SelfSigned {
		t.Error("httptest's certificate signs itself; self_signed should be true")
	}
}

func TestRedirects(t *testing.T) {
	var final *httptest.Server
	final = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		case strings.HasPrefix(r.URL.Path, "/hop/"):
			var n int
			fmt.Sscanf(r.URL.Path, "/hop/%d", &n)
			if n > 0 {
				http.Redirect(w, r, fmt.Sprintf("/hop/%d", n-1), http.StatusMovedPermanently)
				return
			}
			fmt.Fprint(w, "<title>end</title>")
		case r.URL.Path == "/start":
			// cross-host: site.test -> other.test, relative and absolute Locations
			http.Redirect(w, r, at(final, "other.test")+"/middle", http.StatusMovedPermanently)
		case r.URL.Path == "/middle":
			http.Redirect(w, r, "/end#frag", http.StatusSeeOther)
		default:
			fmt.Fprintf(w, "<title>landed on %s</title>", r.Host)
		}
	}))
	defer final.Close()
	h := newHarness(t)
	s := h.scanner()

	res, err := scanWith(s, at(final, "site.test")+"/start")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{at(final, "site.test") + "/start", at(final, "other.test") + "/middle"}
	if !slices.Equal(res.Redirects, want) || res.FinalURL != at(final, "other.test")+"/end" {
		t.Errorf("redirects %q final %q", res.Redirects, res.FinalURL)
	}
	if !strings.HasPrefix(res.Title, "landed on other.test") {
		t.Errorf("title %q", res.Title)
	}

	// Exactly ten hops is allowed, eleven is not.
	if res, err := scanWith(s, at(final, "site.test")+"/hop/10"); err != nil || len(res.Redirects) != 10 {
		t.Errorf("10 hops: %v", err)
	}
	for _, path := range []string{"/hop/11", "/loop"} {
		_, err := scanWith(s, at(final, "site.test")+path)
		if err == nil || !worker.IsPermanent(err) || !strings.Contains(err.Error(), "too many redirects") {
			t.Errorf("%s: want permanent too-many-redirects, got %v", path, err)
		}
	}
}

func TestSlowAndEndlessBodies(t *testing.T) {
	var headerHits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/slow":
			// The head arrives, then the body stalls forever.
			w.Header().Set("Server", "nginx/1.24.0")
			fmt.Fprint(w, "<html><head><title>Slow page</title>")
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		case "/endless":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<html><head><title>Endless</title></head><body>")
			chunk := bytes.Repeat([]byte("<p>more and more</p>\n"), 512)
			for r.Context().Err() == nil {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		case "/noheaders":
			headerHits.Add(1)
			<-r.Context().Done()
		}
	}))
	defer srv.Close()
	h := newHarness(t)
	h.cfg.BodyTimeout = 300 * time.Millisecond
	h.cfg.HeaderTimeout = 300 * time.Millisecond
	h.cfg.BodyLimit = 64 << 10
	s := h.scanner()

	res, err := scanWith(s, at(srv, "site.test")+"/slow")
	if err != nil {
		t.Fatal(err)
	}
	if d, ok := techByName(res, "Nginx"); res.Title != "Slow page" || !ok || d.Version != "1.24.0" {
		t.Errorf("slow page: title %q techs %+v", res.Title, res.Technologies)
	}
	res, err = scanWith(s, at(srv, "site.test")+"/endless")
	if err != nil || res.Title != "Endless" {
		t.Fatalf("endless page: %v %+v", err, res)
	}

	_, err = scanWith(s, at(srv, "site.test")+"/noheaders")
	if err == nil || !worker.IsPermanent(err) || !strings.Contains(err.Error(), "timeout") {
		t.Errorf("no headers: want permanent timeout, got %v", err)
	}
	if n := headerHits.Load(); n != 2 {
		t.Errorf("server asked %d times, want the first try and one retry", n)
	}
}

func TestCompressedBodies(t *testing.T) {
	page := []byte(strings.Repeat("<!-- padding -->\n", 200) + `<title>Compressed</title><meta name="generator" content="WordPress 6.5">`)
	encode := map[string]func([]byte) []byte{
		"gzip": func(b []byte) []byte {
			var buf bytes.Buffer
			zw := gzip.NewWriter(&buf)
			zw.Write(b)
			zw.Close()
			return buf.Bytes()
		},
		"deflate": func(b []byte) []byte { // zlib-wrapped, as the RFC says
			var buf bytes.Buffer
			zw := zlib.NewWriter(&buf)
			zw.Write(b)
			zw.Close()
			return buf.Bytes()
		},
		"raw-deflate": func(b []byte) []byte { // what some servers send instead
			var buf bytes.Buffer
			fw, _ := flate.NewWriter(&buf, 5)
			fw.Write(b)
			fw.Close()
			return buf.Bytes()
		},
		"br": func(b []byte) []byte {
			var buf bytes.Buffer
			bw := brotli.NewWriter(&buf)
			bw.Write(b)
			bw.Close()
			return buf.Bytes()
		},
	}
	var gotAccept atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAccept.Store(r.Header.Get("Accept-Encoding"))
		name := strings.TrimPrefix(r.URL.Path, "/")
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Encoding", strings.TrimPrefix(name, "raw-"))
		w.Write(encode[name](page))
	}))
	defer srv.Close()
	h := newHarness(t)
	s := h.scanner()
	for name := range encode {
		res, err := scanWith(s, at(srv, "site.test")+"/"+name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if d, ok := techByName(res, "WordPress"); res.Title != "Compressed" || !ok || d.Version != "6.5" {
			t.Errorf("%s: title %q techs %+v", name, res.Title, res.Technologies)
		}
	}
	if ae, _ := gotAccept.Load().(string); !strings.Contains(ae, "br") || !strings.Contains(ae, "gzip") {
		t.Errorf("Accept-Encoding %q", ae)
	}
}

func TestCharsets(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/latin1": // charset in the header; é = 0xE9, ü = 0xFC
			w.Header().Set("Content-Type", "text/html; charset=ISO-8859-1")
			w.Write([]byte("<html><head><title>Caf\xe9 M\xfcller</title></head></html>"))
		case "/meta": // charset only in a meta tag; € is 0x80 in windows-1252
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte(`<html><head><meta http-equiv="Content-Type" content="text/html; charset=windows-1252"><title>Price: 5 ` + "\x80</title></head></html>"))
		}
	}))
	defer srv.Close()
	h := newHarness(t)
	s := h.scanner()
	for path, want := range map[string]string{"/latin1": "Café Müller", "/meta": "Price: 5 €"} {
		res, err := scanWith(s, at(srv, "site.test")+path)
		if err != nil {
			t.Fatal(err)
		}
		if res.Title != want {
			t.Errorf("%s: title %q, want %q", path, res.Title, want)
		}
	}
}

// countingListener accepts on 127.0.0.1:0 and counts connections.
func countingListener(t *testing.T) (port string, n *atomic.Int32) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	n = new(atomic.Int32)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			c.Close()
		}
	}()
	_, port, _ = net.SplitHostPort(ln.Addr().String())
	return port, n
}

func TestRefusedTargets(t *testing.T) {
	port, accepted := countingListener(t)
	h := newHarness(t)
	h.cfg.Targets = netguard.PublicOnly
	s := h.scanner()
	// In order: the rebinding name's first answer is the documentation
	// address, every later one is loopback.
	cases := []struct{ url, want string }{
		{"http://site.test:" + port + "/", "refused target site.test (127.0.0.1): not a public address"},
		{"http://127.0.0.1:" + port + "/", "refused target 127.0.0.1 (127.0.0.1): not a public address"},
		{"http://[::1]:" + port + "/", "refused target ::1 (::1): not a public address"},
		{"http://rebind.test:" + port + "/", "refused target rebind.test (203.0.113.10): not a public address"},
		{"https://rebind.test:" + port + "/", "refused target rebind.test (127.0.0.1): not a public address"},
	}
	for _, c := range cases {
		_, err := scanWith(s, c.url)
		if err == nil || !worker.IsPermanent(err) || err.Error() != c.want {
			t.Errorf("%s: got %v, want permanent %q", c.url, err, c.want)
		}
	}
	// The rebinding name answered loopback from its second lookup on, yet
	// nothing ever connected: each dial used the address it had checked.
	h.dns.mu.Lock()
	lookups := h.dns.rebinds
	h.dns.mu.Unlock()
	if lookups < 2 {
		t.Errorf("rebinding name looked up %d times; the test needs a second, loopback answer", lookups)
	}
	time.Sleep(20 * time.Millisecond)
	if n := accepted.Load(); n != 0 {
		t.Errorf("loopback listener accepted %d connections", n)
	}
}

func TestFailures(t *testing.T) {
	plain := httptest.NewServer(http.HandlerFunc(wordpressHandler))
	defer plain.Close()
	closedLn, _ := net.Listen("tcp", "127.0.0.1:0")
	closedPort := closedLn.Addr().(*net.TCPAddr).Port
	closedLn.Close()
	// A server that resets every connection.
	resetLn, _ := net.Listen("tcp", "127.0.0.1:0")
	defer resetLn.Close()
	go func() {
		for {
			c, err := resetLn.Accept()
			if err != nil {
				return
			}
			c.(*net.TCPConn).SetLinger(0)
			buf := make([]byte, 1024)
			c.Read(buf)
			c.Close()
		}
	}()
	resetPort := resetLn.Addr().(*net.TCPAddr).Port

	h := newHarness(t)
	h.cfg.HTTPFallback = false
	s := h.scanner()
	cases := map[string]string{
		"https://nosuch.test/":                                            "nosuch.test: no such host",
		fmt.Sprintf("http://site.test:%d/", closedPort):                   "connection refused",
		fmt.Sprintf("http://site.test:%d/", resetPort):                    "connection reset",
		strings.Replace(at(plain, "site.test"), "http", "https", 1) + "/": "TLS handshake failed",
	}
	for url, want := range cases {
		_, err := scanWith(s, url)
		if err == nil || !worker.IsPermanent(err) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: got %v, want one permanent line with %q", url, err, want)
		}
	}

	// With the fallback on, https that cannot handshake is retried over http.
	h.cfg.HTTPFallback = true
	res, err := h.scan(strings.Replace(at(plain, "site.test"), "http", "https", 1) + "/")
	if err != nil || res.HTTPStatus != 200 || !strings.HasPrefix(res.FinalURL, "http://") {
		t.Errorf("fallback: %v %+v", err, res)
	}
}

func TestErrorPagesAndNonHTML(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/missing":
			w.Header().Set("Server", "nginx/1.25.3")
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, "<html><head><title>404 Not Found</title></head></html>")
		case "/broken":
			w.Header().Set("X-Powered-By", "PHP/7.4.33")
			http.Error(w, "boom", http.StatusInternalServerError)
		case "/api":
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("X-Powered-By", "Express")
			// JSON that happens to contain markup must not be parsed as a page.
			fmt.Fprint(w, `{"html": "<title>not a title</title><meta name=\"generator\" content=\"WordPress 1.0\">"}`)
		}
	}))
	defer srv.Close()
	h := newHarness(t)
	s := h.scanner()
	res, err := scanWith(s, at(srv, "site.test")+"/missing")
	if err != nil || res.HTTPStatus != 404 || res.Title != "404 Not Found" {
		t.Errorf("404: %v %+v", err, res)
	}
	res, err = scanWith(s, at(srv, "site.test")+"/broken")
	if _, ok := techByName(res, "PHP"); err != nil || res.HTTPStatus != 500 || !ok {
		t.Errorf("500: %v %+v", err, res)
	}
	res, err = scanWith(s, at(srv, "site.test")+"/api")
	if err != nil {
		t.Fatal(err)
	}
	_, express := techByName(res, "Express")
	_, wp := techByName(res, "WordPress")
	if res.Title != "" || !express || wp {
		t.Errorf("json: title %q techs %+v", res.Title, res.Technologies)
	}
}

func TestOptions(t *testing.T) {
	var app *httptest.Server
	app = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Strict-Transport-Security", "max-age=31536000; includeSubDomains")
		h.Set("Content-Security-Policy", "default-src 'self'; frame-ancestors 'self'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "strict-origin-when-cross-origin")
		h.Set("Permissions-Policy", "camera=()")
		h.Add("Vary", "Accept-Encoding")
		h.Add("Vary", "Cookie")
		http.SetCookie(w, &http.Cookie{Name: "sid", Value: "1", Secure: true, HttpOnly: true, SameSite: http.SameSiteStrictMode})
		http.SetCookie(w, &http.Cookie{Name: "tracking", Value: "2"})
		fmt.Fprint(w, `<html><head><title>Shop</title>
<script src="http://cdn.site.test/legacy.js"></script></head>
<body><p>Mail support(at)example(dot)com or <a href="mailto:Orders@Example.com">orders</a>.
Retina: banner@2x.jpg</p></body></html>`)
	}))
	app.EnableHTTP2 = true
	app.StartTLS()
	defer app.Close()
	// The plain-http entry point redirects to the https site.
	entry := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, at(app, "example.com")+"/", http.StatusMovedPermanently)
	}))
	defer entry.Close()

	h := newHarness(t)
	h.trust(app)
	h.dns.add("example.com. MX", "example.com. 300 IN MX 20 mx2.example.com.", "example.com. 300 IN MX 10 mx1.example.com.")
	h.dns.add("example.com. TXT", `example.com. 300 IN TXT "v=spf1 -all"`)
	h.dns.add("example.com. NS", "example.com. 300 IN NS ns1.example.com.")
	h.dns.add("example.com. AAAA", "example.com. 300 IN AAAA 2001:db8::1")

	res, err := h.scan(at(entry, "example.com")+"/", "all")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Redirects) != 1 || !strings.HasPrefix(res.FinalURL, "https://example.com:") {
		t.Errorf("redirects %q final %q", res.Redirects, res.FinalURL)
	}
	if got := res.Headers["vary"]; !slices.Equal(got, []string{"Accept-Encoding", "Cookie"}) {
		t.Errorf("headers vary = %q (all: %v)", got, res.Headers)
	}
	for k := range res.Headers {
		if k != strings.ToLower(k) {
			t.Errorf("header name %q not lower-case", k)
		}
	}
	if res.TLS == nil || !res.TLS.Verified {
		t.Errorf("tls %+v", res.TLS)
	}
	d := res.DNS
	if d == nil || !slices.Equal(d.A, []string{"127.0.0.1"}) || !slices.Equal(d.AAAA, []string{"2001:db8::1"}) ||
		len(d.MX) != 2 || d.MX[0].Host != "mx1.example.com" || d.MX[0].Preference != 10 ||
		!slices.Equal(d.TXT, []string{"v=spf1 -all"}) || !slices.Equal(d.NS, []string{"ns1.example.com"}) || len(d.CNAME) != 0 {
		t.Errorf("dns %+v", d)
	}
	sec := res.Security
	// https 20 + redirect 10 + hsts 15 + csp 15 + frame 10 + nosniff 10 +
	// referrer 5 + permissions 5 + cookies (tracking lacks all flags) 0 +
	// active mixed content 0 = 90.
	if sec == nil || sec.Score != 90 || sec.Grade != "A" || len(sec.Cookies) != 2 {
		t.Fatalf("security %+v", sec)
	}
	if !slices.ContainsFunc(sec.Issues, func(s string) bool { return strings.Contains(s, "http://cdn.site.test/legacy.js") }) ||
		!slices.ContainsFunc(sec.Issues, func(s string) bool { return strings.Contains(s, "cookie tracking lacks Secure, HttpOnly, SameSite") }) {
		t.Errorf("issues %q", sec.Issues)
	}
	if want := []string{"orders@example.com", "support@example.com"}; !slices.Equal(res.Emails, want) {
		t.Errorf("emails %q, want %q", res.Emails, want)
	}

	// The JSON document carries every section under the contract's names.
	b, _ := json.Marshal(res)
	var doc map[string]any
	json.Unmarshal(b, &doc)
	for _, k := range []string{"final_url", "http_status", "title", "ip", "redirects", "response_time_ms",
		"technologies", "headers", "tls", "dns", "security", "emails"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("result JSON lacks %q", k)
		}
	}

	// Only what was asked for.
	res, err = h.scan(at(entry, "example.com")+"/", "emails")
	if err != nil || res.Technologies != nil || res.TLS != nil || len(res.Emails) != 2 {
		t.Errorf("emails only: %v %+v", err, res)
	}
	if _, err := h.scan("http://", "technologies"); !worker.IsPermanent(err) {
		t.Errorf("bad URL: %v", err)
	}
}
