package obs

import (
	"io"
	"testing"
)

// BenchmarkScrape writes nine series (six counters, one histogram, two
// gauges) as one scrape of a worker would, without the runtime collectors.
func BenchmarkScrape(b *testing.B) {
	r := NewRegistry()
	jobs := r.NewCounterVec("surveyor_jobs_total", "Jobs that ended.", "kind", "status")
	for _, k := range []string{"scan", "sitemap", "email"} {
		jobs.With(k, "completed").Add(3)
		jobs.With(k, "failed").Inc()
	}
	r.NewHistogramVec("surveyor_job_duration_seconds", "Handler time.", DurationBuckets, "kind", "outcome").
		With("scan", "completed").Observe(0.3)
	r.NewGaugeFunc("surveyor_queue_depth", "Jobs in JOBS.", "kind", func() map[string]float64 {
		return map[string]float64{"scan": 4, "email": 1}
	})
	b.ReportAllocs()
	for b.Loop() {
		r.Write(io.Discard)
	}
}
