package crawl

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/surveyor/surveyor/pkg/job"
	"github.com/surveyor/surveyor/pkg/netguard"
	"github.com/surveyor/surveyor/pkg/worker"
)

// With ALLOW_PRIVATE_TARGETS=127.0.0.2/32 the crawler, dialing as the
// binary does (New with no dialer), crawls a site on 127.0.0.2 and refuses
// one on 127.0.0.1 (Linux answers on all of 127.0.0.0/8).
func TestTargetsListCrawlsOnlyListedRanges(t *testing.T) {
	serveOn := func(ip string, h http.Handler) (*httptest.Server, *hits) {
		ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
		if err != nil {
			t.Fatal(err)
		}
		seen := &hits{}
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			seen.add(r)
			h.ServeHTTP(w, r)
		}))
		srv.Listener.Close()
		srv.Listener = ln
		srv.Start()
		t.Cleanup(srv.Close)
		return srv, seen
	}
	allowed, _ := serveOn("127.0.0.2", linear(3, 0))
	refused, refusedHits := serveOn("127.0.0.1", linear(3, 0))
	cfg := testConfig()
	var err error
	if cfg.Targets, err = netguard.ParsePolicy("127.0.0.2/32"); err != nil {
		t.Fatal(err)
	}
	h := New(cfg, nil)
	crawl := func(url string) (any, error) {
		return h.Handle(t.Context(), &job.Job{ID: "t", Kind: job.Sitemap, URL: url, MaxPages: 10}, &progressLog{})
	}
	v, err := crawl(allowed.URL + "/p/0")
	if err != nil {
		t.Fatal(err)
	}
	if res := v.(*job.SitemapResult); res.PageCount != 3 {
		t.Errorf("crawl of 127.0.0.2: %d pages, want 3", res.PageCount)
	}
	_, err = crawl(refused.URL + "/p/0")
	var re *netguard.RefusedError
	if !worker.IsPermanent(err) || !errors.As(err, &re) || re.Addr.String() != "127.0.0.1" {
		t.Errorf("crawl of 127.0.0.1: %v, want a permanent refusal", err)
	}
	if n := refusedHits.prefixed(""); n != 0 {
		t.Errorf("the site on 127.0.0.1 got %d requests, want 0", n)
	}
}
