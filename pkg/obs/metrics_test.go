package obs

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

func TestExpositionFormat(t *testing.T) {
	r := NewRegistry()
	c := r.NewCounterVec("jobs_total", "Jobs.", "kind", "status")
	c.With("scan", "completed").Add(2)
	c.With("email", `we"ird`).Inc()
	again := r.NewCounterVec("jobs_total", "Jobs.", "kind", "status")
	again.With("scan", "completed").Inc() // the same series as c's
	r.NewCounterVec("reloads_total", "Reloads.")
	h := r.NewHistogramVec("wait_seconds", "Waits.", []float64{0.1, 1}, "kind")
	h.With("scan").Observe(0.05)
	h.With("scan").Observe(0.5)
	h.With("scan").Observe(7)
	r.NewGaugeFunc("depth", "Depth.", "kind", func() map[string]float64 { return map[string]float64{"scan": 4} })
	r.NewGaugeFunc("custom", "Custom.", "", func() map[string]float64 { return map[string]float64{"": 2} })
	var b strings.Builder
	if err := r.Write(&b); err != nil {
		t.Fatal(err)
	}
	want := `# HELP custom Custom.
# TYPE custom gauge
custom 2
# HELP depth Depth.
# TYPE depth gauge
depth{kind="scan"} 4
# HELP jobs_total Jobs.
# TYPE jobs_total counter
jobs_total{kind="email",status="we\"ird"} 1
jobs_total{kind="scan",status="completed"} 3
# HELP reloads_total Reloads.
# TYPE reloads_total counter
reloads_total 0
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

func TestGaugeFuncReportsTheLatestComponent(t *testing.T) {
	r := NewRegistry()
	for _, v := range []float64{1, 2} {
		r.NewGaugeFunc("pending", "Pending.", "kind", func() map[string]float64 { return map[string]float64{"scan": v} })
	}
	var b strings.Builder
	r.Write(&b)
	if !strings.Contains(b.String(), "pending{kind=\"scan\"} 2\n") {
		t.Fatalf("want the second gauge's value:\n%s", b.String())
	}
}

func TestConflictingDeclarationPanics(t *testing.T) {
	r := NewRegistry()
	r.NewCounterVec("jobs_total", "Jobs.", "kind")
	defer func() {
		if recover() == nil {
			t.Fatal("a second jobs_total with other labels was accepted")
		}
	}()
	r.NewCounterVec("jobs_total", "Jobs.", "kind", "status")
}

// The admin endpoint serves Default with the Go runtime and process
// metrics beside Surveyor's, in a format Prometheus parses.
func TestAdminServesRuntimeMetrics(t *testing.T) {
	Default.NewCounterVec("surveyor_obs_test_total", "Test.", "kind").With("scan").Inc()
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan string, 1)
	done := make(chan error, 1)
	a := &Admin{Addr: "127.0.0.1:0", Registry: Default, Ready: func() error { return nil }}
	go func() { done <- a.Serve(ctx, func(s string) { addr <- s }) }()
	defer func() { cancel(); <-done }()

	res, err := http.Get("http://" + <-addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	parser := expfmt.NewTextParser(model.LegacyValidation)
	families, err := parser.TextToMetricFamilies(res.Body)
	if err != nil {
		t.Fatalf("exposition does not parse: %v", err)
	}
	for _, name := range []string{"surveyor_obs_test_total", "go_goroutines", "go_gc_gogc_percent", "process_cpu_seconds_total"} {
		if families[name] == nil {
			t.Errorf("/metrics lacks %s", name)
		}
	}
}
