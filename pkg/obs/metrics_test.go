package obs

import (
	"strings"
	"testing"
)

func TestExpositionFormat(t *testing.T) {
	r := NewRegistry()
	c := r.NewCounterVec("jobs_total", "Jobs.", "kind", "status")
	c.With("scan", "completed").Add(2)
	c.With("scan", "completed").Inc()
	c.With("email", `we"ird`).Inc()
	h := r.NewHistogramVec("wait_seconds", "Waits.", []float64{0.1, 1}, "kind")
	h.With("scan").Observe(0.05)
	h.With("scan").Observe(0.5)
	h.With("scan").Observe(7)
	r.NewGaugeFunc("depth", "Depth.", "kind", func() map[string]float64 { return map[string]float64{"scan": 4} })
	if again := r.NewCounterVec("jobs_total", "Jobs.", "kind", "status"); again != c {
		t.Fatal("registering a name twice made a second family")
	}
	var b strings.Builder
	r.Write(&b)
	want := `# HELP depth Depth.
# TYPE depth gauge
depth{kind="scan"} 4
# HELP jobs_total Jobs.
# TYPE jobs_total counter
jobs_total{kind="email",status="we\"ird"} 1
jobs_total{kind="scan",status="completed"} 3
# HELP wait_seconds Waits.
# TYPE wait_seconds histogram
wait_seconds_bucket{kind="scan",le="0.1"} 1
wait_seconds_bucket{kind="scan",le="1"} 2
wait_seconds_bucket{kind="scan",le="+Inf"} 3
wait_seconds_sum{kind="scan"} 7.55
wait_seconds_count{kind="scan"} 3
`
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
}
