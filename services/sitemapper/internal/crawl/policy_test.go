package crawl

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/surveyor/surveyor/pkg/config"
	"github.com/surveyor/surveyor/pkg/job"
	"github.com/surveyor/surveyor/pkg/netguard"
	"github.com/surveyor/surveyor/pkg/worker"
)

// withRobots serves robots.txt by the given function and the rest from site.
func withRobots(robots http.HandlerFunc, site http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			robots(w, r)
			return
		}
		site.ServeHTTP(w, r)
	})
}

// A robots.txt that answers 5xx or not at all closes the site for the
// crawl, after one retry; a 404 opens it.
func TestRobotsUnavailable(t *testing.T) {
	cases := []struct {
		name   string
		robots http.HandlerFunc
		pages  int
	}{
		{"503", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "down", http.StatusServiceUnavailable) }, 0},
		{"500", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "oops", 500) }, 0},
		{"timeout", func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }, 0},
		{"404", http.NotFound, 3},
		{"401", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "who", http.StatusUnauthorized) }, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.Timeout = 300 * time.Millisecond
			e := newEnv(t, withRobots(c.robots, linear(3, 0)), cfg, false)
			res := e.mustCrawl("http://example.com/p/0", 10)
			if res.PageCount != c.pages {
				t.Fatalf("%d pages, want %d", res.PageCount, c.pages)
			}
			if n := e.hits.prefixed("example.com/p/"); n != c.pages {
				t.Fatalf("%d page requests, want %d", n, c.pages)
			}
			robotsHits := e.hits.get("example.com/robots.txt")
			if c.pages == 0 {
				if robotsHits != 2 || res.Excluded.Robots != 1 || res.RobotsTxt.Error == "" || res.RobotsTxt.Found {
					t.Fatalf("robots fetched %d times, excluded %d, robots_txt %+v", robotsHits, res.Excluded.Robots, res.RobotsTxt)
				}
			} else if robotsHits != 1 || res.RobotsTxt.Found {
				t.Fatalf("robots fetched %d times, robots_txt %+v", robotsHits, res.RobotsTxt)
			}
		})
	}
}

func TestRobotsRetrySucceeds(t *testing.T) {
	var calls atomic.Int32
	robots := func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprint(w, "User-agent: SurveyorBot\nDisallow: /p/2\n")
	}
	e := newEnv(t, withRobots(robots, linear(4, 0)), testConfig(), false)
	res := e.mustCrawl("http://example.com/p/0", 10)
	if res.PageCount != 3 || res.Excluded.Robots != 1 || !res.RobotsTxt.Found {
		t.Fatalf("pages %d excluded %+v robots %+v", res.PageCount, res.Excluded, res.RobotsTxt)
	}
}

func TestRefusedStartFailsPermanently(t *testing.T) {
	cfg := testConfig()
	cfg.Targets = netguard.PublicOnly
	e := newEnv(t, linear(3, 0), cfg, false)
	_, _, err := e.crawl("http://example.com/p/0", 10)
	var refused *netguard.RefusedError
	if !worker.IsPermanent(err) || !errors.As(err, &refused) {
		t.Fatalf("err = %v, want a permanent refusal", err)
	}
	if n := e.hits.prefixed("example.com"); n != 0 {
		t.Fatalf("%d requests reached the private server", n)
	}
}

func TestUnknownHostFailsPermanently(t *testing.T) {
	e := newEnv(t, linear(3, 0), testConfig(), false)
	if _, _, err := e.crawl("http://nowhere.test/", 10); !worker.IsPermanent(err) {
		t.Fatalf("err = %v, want permanent", err)
	}
}

// concurrency records how many requests a server handles at once.
type concurrency struct {
	now, peak atomic.Int32
	mu        sync.Mutex
	starts    []time.Time
}

func (c *concurrency) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/robots.txt" && r.URL.Path != "/sitemap.xml" {
			c.mu.Lock()
			c.starts = append(c.starts, time.Now())
			c.mu.Unlock()
			n := c.now.Add(1)
			defer c.now.Add(-1)
			for p := c.peak.Load(); n > p && !c.peak.CompareAndSwap(p, n); p = c.peak.Load() {
			}
		}
		next.ServeHTTP(w, r)
	})
}

func TestPerHostLimit(t *testing.T) {
	cfg := testConfig()
	cfg.PerHost = 3
	var c concurrency
	e := newEnv(t, c.wrap(linear(60, 30*time.Millisecond)), cfg, false)
	res := e.mustCrawl("http://example.com/p/0", 60)
	if res.PageCount != 60 {
		t.Fatalf("%d pages", res.PageCount)
	}
	if p := c.peak.Load(); p != 3 {
		t.Fatalf("peak concurrency %d, want exactly the limit 3", p)
	}
	// Keep-alive: the 60 pages (plus robots.txt and sitemap.xml) share
	// about as many connections as run at once.
	if n := e.conns.Load(); n > 2*3 {
		t.Fatalf("%d connections for 62 requests", n)
	}
}

func TestCrawlDelay(t *testing.T) {
	var c concurrency
	robots := func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "User-agent: *\nCrawl-delay: 0.15\n")
	}
	e := newEnv(t, c.wrap(withRobots(robots, linear(4, 0))), testConfig(), false)
	res := e.mustCrawl("http://example.com/p/0", 10)
	if res.PageCount != 4 {
		t.Fatalf("%d pages", res.PageCount)
	}
	if p := c.peak.Load(); p != 1 {
		t.Errorf("peak concurrency %d under Crawl-delay, want 1", p)
	}
	for i := 1; i < len(c.starts); i++ {
		if gap := c.starts[i].Sub(c.starts[i-1]); gap < 140*time.Millisecond {
			t.Errorf("requests %d and %d only %v apart", i-1, i, gap)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	var first atomic.Value
	var second atomic.Value
	site := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		if first.CompareAndSwap(nil, time.Now()) {
			w.Header().Set("Retry-After", "1")
			http.Error(w, "slow down", http.StatusTooManyRequests)
			return
		}
		second.CompareAndSwap(nil, time.Now())
		page(w, "Home", "")
	})
	e := newEnv(t, site, testConfig(), false)
	res := e.mustCrawl("http://example.com/", 10)
	if res.PageCount != 1 || res.Pages[0].Status != 200 {
		t.Fatalf("pages %+v", res.Pages)
	}
	if gap := second.Load().(time.Time).Sub(first.Load().(time.Time)); gap < 900*time.Millisecond {
		t.Fatalf("retried after %v, want Retry-After's 1s", gap)
	}
}

func TestRetryGivesUp(t *testing.T) {
	site := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "0")
		http.Error(w, "down", http.StatusServiceUnavailable)
	})
	e := newEnv(t, withRobots(http.NotFound, site), testConfig(), false)
	res := e.mustCrawl("http://example.com/", 10)
	if res.PageCount != 1 || res.Pages[0].Status != 503 || res.Excluded.Errors != 1 {
		t.Fatalf("result %+v", res)
	}
	if n := e.hits.get("example.com/"); n != 1+maxRetries {
		t.Fatalf("%d requests, want %d", n, 1+maxRetries)
	}
}

// A site that moves to https brings the https origin (and its www twin)
// into scope.
func TestHTTPSUpgrade(t *testing.T) {
	site := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil {
			http.Redirect(w, r, "https://example.com"+r.URL.RequestURI(), http.StatusMovedPermanently)
			return
		}
		switch r.URL.Path {
		case "/":
			page(w, "Secure", `<a href="/a">a</a> <a href="https://www.example.com/b">b</a> <a href="http://example.com/c">c</a> <a href="https://other.test/">x</a>`)
		case "/robots.txt", "/sitemap.xml":
			http.NotFound(w, r)
		default:
			page(w, r.URL.Path, "")
		}
	})
	e := newEnv(t, site, testConfig(), true)
	res := e.mustCrawl("http://example.com/", 10)
	pages := byURL(res)
	for _, u := range []string{"https://example.com/", "https://example.com/a", "https://www.example.com/b", "https://example.com/c"} {
		if p, ok := pages[u]; !ok || p.Status != 200 {
			t.Errorf("%s: %+v", u, p)
		}
	}
	if p := pages["https://example.com/"]; p.Source != job.FromStart || p.RedirectedFrom != "http://example.com/" {
		t.Errorf("start page %+v", p)
	}
	if res.PageCount != 4 || res.Excluded.OutOfScope != 1 {
		t.Errorf("page_count %d excluded %+v", res.PageCount, res.Excluded)
	}
}

func TestJobBudget(t *testing.T) {
	cfg := testConfig()
	cfg.JobBudget = 400 * time.Millisecond
	e := newEnv(t, linear(10000, 50*time.Millisecond), cfg, false)
	start := time.Now()
	res := e.mustCrawl("http://example.com/p/0", 10000)
	if !res.TimedOut || res.PageCount == 0 || res.PageCount > 100 {
		t.Fatalf("timed out %v with %d pages", res.TimedOut, res.PageCount)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("a 400ms budget took %v", d)
	}
}

func TestCancelIsRetryable(t *testing.T) {
	e := newEnv(t, linear(10000, 50*time.Millisecond), testConfig(), false)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := e.h.Handle(ctx, &job.Job{Kind: job.Sitemap, URL: "http://example.com/p/0", MaxPages: 1000}, nil)
	if err == nil || worker.IsPermanent(err) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the context's error, retryable", err)
	}
}

func TestBadStartURL(t *testing.T) {
	e := newEnv(t, linear(1, 0), testConfig(), false)
	for _, u := range []string{"ftp://example.com/", "mailto:x@example.com", "http://"} {
		if _, _, err := e.crawl(u, 10); !worker.IsPermanent(err) {
			t.Errorf("%s: err = %v, want permanent", u, err)
		}
	}
}

func TestConfig(t *testing.T) {
	var c Config
	if err := config.Load(config.Map(nil), &c); err != nil || c != config.Defaults[Config]() || c.PerHost != 4 {
		t.Fatalf("defaults: %+v, %v", c, err)
	}
	err := config.Load(config.Map(map[string]string{
		"SITEMAPPER_PER_HOST": "8", "SITEMAPPER_MAX_DEPTH": "5", "SITEMAPPER_TIMEOUT": "5s",
		"SITEMAPPER_JOB_BUDGET": "1m", "SITEMAPPER_BODY_LIMIT": "1048576", "SITEMAPPER_USER_AGENT": "X/1",
	}), &c)
	if err != nil || c.PerHost != 8 || c.MaxDepth != 5 || c.Timeout != 5*time.Second ||
		c.JobBudget != time.Minute || c.BodyLimit != 1<<20 || c.UserAgent != "X/1" {
		t.Fatalf("got %+v, %v", c, err)
	}
	err = config.Load(config.Map(map[string]string{
		"SITEMAPPER_PER_HOST": "0", "SITEMAPPER_TIMEOUT": "soon", "SITEMAPPER_BODY_LIMIT": "12",
	}), &c)
	for _, name := range []string{"SITEMAPPER_PER_HOST", "SITEMAPPER_TIMEOUT", "SITEMAPPER_BODY_LIMIT"} {
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("error %v does not name %s", err, name)
		}
	}
	err = config.Load(config.Map(map[string]string{"SITEMAPPER_TIMEOUT": "2m", "SITEMAPPER_JOB_BUDGET": "1m"}), &c)
	if err == nil || !strings.Contains(err.Error(), "SITEMAPPER_JOB_BUDGET: 1m is shorter than SITEMAPPER_TIMEOUT (2m)") {
		t.Errorf("budget shorter than timeout accepted: %v", err)
	}
}
