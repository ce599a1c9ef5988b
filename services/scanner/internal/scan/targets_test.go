package scan

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/surveyor/surveyor/pkg/netguard"
	"github.com/surveyor/surveyor/pkg/worker"
)

// serveOn starts an HTTP server on ip, a loopback address (Linux answers
// on all of 127.0.0.0/8), that counts the requests it gets.
func serveOn(t testing.TB, ip string, h http.HandlerFunc) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	n := new(atomic.Int32)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		h(w, r)
	}))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, n
}

// With ALLOW_PRIVATE_TARGETS=127.0.0.2/32 the scanner scans a server on
// 127.0.0.2, by address or by name, and refuses one on 127.0.0.1, also
// when the allowed one redirects there.
func TestTargetsListScansOnlyListedRanges(t *testing.T) {
	refused, hits := serveOn(t, "127.0.0.1", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Server", "nginx/1.1")
	})
	allowed, _ := serveOn(t, "127.0.0.2", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/away" {
			http.Redirect(w, r, refused.URL+"/", http.StatusFound)
			return
		}
		w.Header().Set("Server", "nginx/1.25.3")
		w.Write([]byte("<html><body>ok</body></html>"))
	})
	h := newHarness(t)
	h.dns.a["two.test"] = "127.0.0.2"
	var err error
	if h.cfg.Targets, err = netguard.ParsePolicy("127.0.0.2/32"); err != nil {
		t.Fatal(err)
	}
	s := h.scanner()
	for _, url := range []string{allowed.URL + "/", at(allowed, "two.test") + "/"} {
		res, err := scanWith(s, url)
		if err != nil {
			t.Fatalf("%s: %v", url, err)
		}
		if d, ok := techByName(res, "Nginx"); !ok || d.Version != "1.25.3" {
			t.Errorf("%s: Nginx %+v %v, want version 1.25.3", url, d, ok)
		}
	}
	for _, url := range []string{refused.URL + "/", at(refused, "site.test") + "/", allowed.URL + "/away"} {
		_, err := scanWith(s, url)
		if err == nil || !worker.IsPermanent(err) || !strings.Contains(err.Error(), "refused target") || !strings.Contains(err.Error(), "(127.0.0.1)") {
			t.Errorf("%s: got %v, want a permanent refusal of 127.0.0.1", url, err)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the server on 127.0.0.1 got %d requests, want 0", n)
	}
}
