// Package obs is Surveyor's observability: Prometheus metrics and the
// admin endpoints of the workers (logs are set up by pkg/service).
//
// Metrics are prometheus/client_golang's; obs only keeps the call
// sites short: a family is declared by name on a Registry (declaring it
// again returns the first), and a series is picked by its label values in
// the order the family declared its labels.
package obs

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"
)

// Registry holds metric families and writes them as Prometheus text.
type Registry struct{ reg *prometheus.Registry }

// Default is the process-wide registry that /metrics serves. It includes
// the Go runtime's go_* metrics (heap, GC, the GOGC in force) and the
// process's process_* metrics (CPU, memory, file descriptors).
var Default = func() *Registry {
	r := NewRegistry()
	r.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return r
}()

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{reg: prometheus.NewRegistry()} }

// register adds c, or returns the collector that already describes the
// same family. A name declared twice with different labels or help is a
// programming error and panics.
func register[C prometheus.Collector](r *Registry, name string, c C) C {
	err := r.reg.Register(c)
	if err == nil {
		return c
	}
	if dup, ok := errors.AsType[prometheus.AlreadyRegisteredError](err); ok {
		if old, ok := dup.ExistingCollector.(C); ok {
			return old
		}
	}
	panic(fmt.Sprintf("obs: metric %s: %v", name, err))
}

// Write writes every family, sorted by name, in the text format
// (version 0.0.4). It returns the first error; what could be gathered is
// written all the same.
func (r *Registry) Write(w io.Writer) error {
	families, gatherErr := r.reg.Gather()
	for _, f := range families {
		if _, err := expfmt.MetricFamilyToText(w, f); err != nil {
			return err
		}
	}
	return gatherErr
}

// Handler serves the registry over net/http, negotiating the format the
// scraper asks for.
func (r *Registry) Handler() http.Handler {
	return promhttp.HandlerFor(r.reg, promhttp.HandlerOpts{})
}

// CounterVec is a family of monotonically increasing counters.
type CounterVec struct{ vec *prometheus.CounterVec }

// NewCounterVec registers a counter family. Without labels its one series
// exists (at 0) from the start.
func (r *Registry) NewCounterVec(name, help string, labels ...string) *CounterVec {
	v := register(r, name, prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels))
	if len(labels) == 0 {
		v.WithLabelValues()
	}
	return &CounterVec{v}
}

// With returns the series for the label values, creating it.
func (v *CounterVec) With(values ...string) prometheus.Counter {
	return v.vec.WithLabelValues(values...)
}

// DurationBuckets suit request and job times, in seconds.
var DurationBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300}

// HistogramVec is a family of histograms with fixed buckets.
type HistogramVec struct{ vec *prometheus.HistogramVec }

// NewHistogramVec registers a histogram family.
func (r *Registry) NewHistogramVec(name, help string, buckets []float64, labels ...string) *HistogramVec {
	return &HistogramVec{register(r, name, prometheus.NewHistogramVec(
		prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labels))}
}

// With returns the series for the label values, creating it.
func (v *HistogramVec) With(values ...string) prometheus.Observer {
	return v.vec.WithLabelValues(values...)
}

// gaugeFunc is a gauge family whose series are read at scrape time.
type gaugeFunc struct {
	desc     *prometheus.Desc
	labelled bool
	read     atomic.Pointer[func() map[string]float64]
}

// NewGaugeFunc registers a gauge read at scrape time. With one label, read
// returns a value per label value; with none, the value under key "".
// Registering the name again replaces read: the component created last
// (the live one, when tests build several in one process) is reported.
func (r *Registry) NewGaugeFunc(name, help string, label string, read func() map[string]float64) {
	var labels []string
	if label != "" {
		labels = []string{label}
	}
	g := &gaugeFunc{desc: prometheus.NewDesc(name, help, labels, nil), labelled: label != ""}
	g.read.Store(&read) // before a scrape can see g
	register(r, name, g).read.Store(&read)
}

func (g *gaugeFunc) Describe(ch chan<- *prometheus.Desc) { ch <- g.desc }

func (g *gaugeFunc) Collect(ch chan<- prometheus.Metric) {
	for k, v := range (*g.read.Load())() {
		var values []string
		if g.labelled {
			values = []string{k}
		}
		ch <- prometheus.MustNewConstMetric(g.desc, prometheus.GaugeValue, v, values...)
	}
}
