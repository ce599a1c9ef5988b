package scan

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// benchConcurrency is the scanner's default SCANNER_CONCURRENCY.
const benchConcurrency = 32

// BenchmarkHandle200Pages scans 200 local pages that each answer after 10 ms,
// once one at a time and once at the default concurrency, and reports both
// rates, their ratio (target: at least 10), the peak heap seen while
// scanning concurrently and the process CPU time per scan (the test's
// servers included).
func BenchmarkHandle200Pages(b *testing.B) { benchHandle200Pages(b) }

// BenchmarkHandle200PagesSecurityEmails is the same with the two sections
// that read the page's markup beyond the fingerprint evidence.
func BenchmarkHandle200PagesSecurityEmails(b *testing.B) {
	benchHandle200Pages(b, "technologies", "security", "emails")
}

func benchHandle200Pages(b *testing.B, options ...string) {
	const pages, latency = 200, 10 * time.Millisecond
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(latency)
		wordpressHandler(w, r)
	}))
	defer srv.Close()
	h := newHarness(b)
	s := h.scanner()
	urls := make([]string, pages)
	for i := range urls {
		urls[i] = fmt.Sprintf("%s/page/%d", at(srv, "site.test"), i)
	}
	run := func(workers int) time.Duration {
		start := time.Now()
		var next atomic.Int32
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for i := int(next.Add(1)) - 1; i < pages; i = int(next.Add(1)) - 1 {
					if _, err := scanWith(s, urls[i], options...); err != nil {
						b.Error(err)
					}
				}
			})
		}
		wg.Wait()
		return time.Since(start)
	}

	var serial, parallel time.Duration
	var peak uint64
	b.ReportAllocs()
	cpu := cpuTime()
	for b.Loop() {
		serial += run(1)
		stop := make(chan struct{})
		sampled := make(chan uint64)
		go func() { sampled <- samplePeakHeap(stop) }()
		parallel += run(benchConcurrency)
		close(stop)
		peak = max(peak, <-sampled)
	}
	cpu = cpuTime() - cpu
	n := float64(b.N * pages)
	b.ReportMetric(float64(cpu.Microseconds())/(2*n), "cpu-us/scan")
	b.ReportMetric(n/serial.Seconds(), "scans/s-c1")
	b.ReportMetric(n/parallel.Seconds(), "scans/s")
	b.ReportMetric(serial.Seconds()/parallel.Seconds(), "ratio")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	b.ReportMetric(float64(benchConcurrency), "concurrency")
}

// cpuTime is the user and system CPU time the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// samplePeakHeap polls the heap in use until stop closes.
func samplePeakHeap(stop <-chan struct{}) uint64 {
	var peak uint64
	var ms runtime.MemStats
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapInuse)
		select {
		case <-stop:
			return peak
		case <-tick.C:
		}
	}
}
