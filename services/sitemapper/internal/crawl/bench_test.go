package crawl

import (
	"fmt"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/surveyor/surveyor/pkg/config"
)

// generatedSite serves /p/0 .. /p/n-1 after a fixed latency. Page i links to
// its ten children 10i+1..10i+10, its parent, its neighbours and two pages
// far away, so the graph is one site of n reachable pages with shared links,
// like a real one. robots.txt and sitemap.xml are missing (404).
func generatedSite(n int, latency time.Duration) http.Handler {
	filler := strings.Repeat("Lorem ipsum dolor sit amet, consectetur adipiscing elit. ", 30)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(latency)
		i, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/p/"))
		if err != nil || i < 0 || i >= n {
			http.NotFound(w, r)
			return
		}
		var b strings.Builder
		b.WriteString("<nav>")
		for _, k := range []int{i / 10, i - 1, i + 1, (i * 7919) % n, (i*104729 + 13) % n} {
			if k >= 0 && k < n {
				fmt.Fprintf(&b, `<a href="/p/%d">page %d</a> `, k, k)
			}
		}
		b.WriteString("</nav><ul>")
		for k := 10*i + 1; k <= 10*i+10 && k < n; k++ {
			fmt.Fprintf(&b, `<li><a href="/p/%d">child %d</a></li>`, k, k)
		}
		b.WriteString("</ul><p>" + filler + "</p>")
		page(w, "Page "+strconv.Itoa(i), b.String())
	})
}

// crawlRate crawls maxPages pages of site and returns pages per second.
func crawlRate(b *testing.B, site http.Handler, perHost, maxPages int) float64 {
	cfg := testConfig()
	cfg.PerHost = perHost
	cfg.JobBudget = 10 * time.Minute
	e := newEnv(b, site, cfg, false)
	start := time.Now()
	res := e.mustCrawl("http://example.com/p/0", maxPages)
	if res.PageCount != maxPages {
		b.Fatalf("crawled %d pages, want %d", res.PageCount, maxPages)
	}
	return float64(res.PageCount) / time.Since(start).Seconds()
}

// BenchmarkPoliteThroughput crawls a 10,000-page site with 20 ms latency
// per response, once with one request at a time (the baseline) and once at
// the default politeness of 4 per host, and reports both rates and their
// ratio (target: >= 3.5). Each crawl stops at 300 pages to keep the run
// short; the rate is steady long before that.
func BenchmarkPoliteThroughput(b *testing.B) {
	site := generatedSite(10_000, 20*time.Millisecond)
	const pages = 300
	for b.Loop() {
		serial := crawlRate(b, site, 1, pages)
		polite := crawlRate(b, site, config.Defaults[Config]().PerHost, pages)
		b.ReportMetric(serial, "pages/s-serial")
		b.ReportMetric(polite, "pages/s-per-host-4")
		b.ReportMetric(polite/serial, "x-vs-serial")
	}
}

// BenchmarkCrawlMemory crawls all 10,000 pages of the generated site (no
// latency) at default settings and reports the peak heap in use, sampled
// every 5 ms; the test servers share the process, so the figure is an upper
// bound of the crawler's own (target: < 150 MB). The baseline is the heap
// before the crawl.
func BenchmarkCrawlMemory(b *testing.B) {
	site := generatedSite(10_000, 0)
	for b.Loop() {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		base := ms.HeapInuse
		var peak atomic.Uint64
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			t := time.NewTicker(5 * time.Millisecond)
			defer t.Stop()
			var m runtime.MemStats
			for {
				runtime.ReadMemStats(&m)
				if m.HeapInuse > peak.Load() {
					peak.Store(m.HeapInuse)
				}
				select {
				case <-stop:
					return
				case <-t.C:
				}
			}
		}()
		rate := crawlRate(b, site, config.Defaults[Config]().PerHost, 10_000)
		close(stop)
		<-done
		b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MB")
		b.ReportMetric(float64(base)/(1<<20), "base-heap-MB")
		b.ReportMetric(rate, "pages/s")
	}
}
