// Package obs is Surveyor's observability: Prometheus metrics in the text
// exposition format, JSON logs, and the admin endpoints of the workers.
//
// The metrics registry is small on purpose: counters, gauges and histograms
// with labels are all Surveyor exports, and writing them takes no
// allocation-heavy dependency on the ingest hot path.
package obs

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Registry holds metric families and writes them as Prometheus text.
type Registry struct {
	mu       sync.Mutex
	families map[string]family
}

type family interface {
	write(w io.Writer, name string)
}

// Default is the process-wide registry that /metrics serves.
var Default = NewRegistry()

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{families: map[string]family{}} }

func (r *Registry) register(name string, f family) family {
	r.mu.Lock()
	defer r.mu.Unlock()
	if old, ok := r.families[name]; ok {
		return old
	}
	r.families[name] = f
	return f
}

// Write writes every family, sorted by name.
func (r *Registry) Write(w io.Writer) {
	r.mu.Lock()
	names := make([]string, 0, len(r.families))
	for n := range r.families {
		names = append(names, n)
	}
	fams := make([]family, len(names))
	sort.Strings(names)
	for i, n := range names {
		fams[i] = r.families[n]
	}
	r.mu.Unlock()
	for i, f := range fams {
		f.write(w, names[i])
	}
}

// labelKey joins label values; labels are few and fixed per family.
func labelKey(values []string) string { return strings.Join(values, "\xff") }

func formatLabels(names, values []string, extra ...string) string {
	if len(names) == 0 && len(extra) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteByte('{')
	for i, n := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(n)
		b.WriteString(`="`)
		b.WriteString(escape(values[i]))
		b.WriteByte('"')
	}
	for i := 0; i+1 < len(extra); i += 2 {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		b.WriteString(extra[i])
		b.WriteString(`="`)
		b.WriteString(extra[i+1])
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}

func escape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}

func formatFloat(v float64) string {
	if math.IsInf(v, 1) {
		return "+Inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// CounterVec is a family of monotonically increasing counters.
type CounterVec struct {
	help   string
	labels []string
	mu     sync.RWMutex
	series map[string]*Counter
	order  map[string][]string
}

// Counter is one labelled series.
type Counter struct{ bits atomic.Uint64 }

// Add adds v (>= 0).
func (c *Counter) Add(v float64) {
	for {
		old := c.bits.Load()
		if c.bits.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+v)) {
			return
		}
	}
}

// Inc adds one.
func (c *Counter) Inc() { c.Add(1) }

// Value returns the current count.
func (c *Counter) Value() float64 { return math.Float64frombits(c.bits.Load()) }

// NewCounterVec registers a counter family.
func (r *Registry) NewCounterVec(name, help string, labels ...string) *CounterVec {
	return r.register(name, &CounterVec{help: help, labels: labels, series: map[string]*Counter{}, order: map[string][]string{}}).(*CounterVec)
}

// With returns the series for the label values, creating it.
func (v *CounterVec) With(values ...string) *Counter {
	k := labelKey(values)
	v.mu.RLock()
	c := v.series[k]
	v.mu.RUnlock()
	if c != nil {
		return c
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if c = v.series[k]; c == nil {
		c = &Counter{}
		v.series[k] = c
		v.order[k] = append([]string(nil), values...)
	}
	return c
}

func (v *CounterVec) write(w io.Writer, name string) {
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s counter\n", name, v.help, name)
	v.mu.RLock()
	defer v.mu.RUnlock()
	for _, k := range slices.Sorted(maps.Keys(v.series)) {
		fmt.Fprintf(w, "%s%s %s\n", name, formatLabels(v.labels, v.order[k]), formatFloat(v.series[k].Value()))
	}
}

// GaugeFunc is a gauge whose values are read when /metrics is scraped.
type GaugeFunc struct {
	help   string
	labels []string
	read   func() map[string]float64 // label value (single label) -> value
}

// NewGaugeFunc registers a gauge read at scrape time. With one label, read
// returns a value per label value; with none, the value under key "".
func (r *Registry) NewGaugeFunc(name, help string, label string, read func() map[string]float64) {
	var labels []string
	if label != "" {
		labels = []string{label}
	}
	r.register(name, &GaugeFunc{help: help, labels: labels, read: read})
}

func (g *GaugeFunc) write(w io.Writer, name string) {
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s gauge\n", name, g.help, name)
	vals := g.read()
	for _, k := range slices.Sorted(maps.Keys(vals)) {
		var lv []string
		if len(g.labels) > 0 {
			lv = []string{k}
		}
		fmt.Fprintf(w, "%s%s %s\n", name, formatLabels(g.labels, lv), formatFloat(vals[k]))
	}
}

// HistogramVec is a family of histograms with fixed buckets.
type HistogramVec struct {
	help    string
	labels  []string
	buckets []float64
	mu      sync.RWMutex
	series  map[string]*Histogram
	order   map[string][]string
}

// Histogram is one labelled series.
type Histogram struct {
	buckets []float64
	mu      sync.Mutex
	counts  []uint64
	sum     float64
	count   uint64
}

// DurationBuckets suit request and job times, in seconds.
var DurationBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300}

// NewHistogramVec registers a histogram family.
func (r *Registry) NewHistogramVec(name, help string, buckets []float64, labels ...string) *HistogramVec {
	return r.register(name, &HistogramVec{help: help, labels: labels, buckets: buckets, series: map[string]*Histogram{}, order: map[string][]string{}}).(*HistogramVec)
}

// With returns the series for the label values, creating it.
func (v *HistogramVec) With(values ...string) *Histogram {
	k := labelKey(values)
	v.mu.RLock()
	h := v.series[k]
	v.mu.RUnlock()
	if h != nil {
		return h
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if h = v.series[k]; h == nil {
		h = &Histogram{buckets: v.buckets, counts: make([]uint64, len(v.buckets))}
		v.series[k] = h
		v.order[k] = append([]string(nil), values...)
	}
	return h
}

// Observe records one value.
func (h *Histogram) Observe(x float64) {
	i := sort.SearchFloat64s(h.buckets, x)
	h.mu.Lock()
	if i < len(h.counts) {
		h.counts[i]++
	}
	h.sum += x
	h.count++
	h.mu.Unlock()
}

func (v *HistogramVec) write(w io.Writer, name string) {
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s histogram\n", name, v.help, name)
	v.mu.RLock()
	defer v.mu.RUnlock()
	for _, k := range slices.Sorted(maps.Keys(v.series)) {
		h := v.series[k]
		h.mu.Lock()
		var cum uint64
		for i, b := range h.buckets {
			cum += h.counts[i]
			fmt.Fprintf(w, "%s_bucket%s %d\n", name, formatLabels(v.labels, v.order[k], "le", formatFloat(b)), cum)
		}
		fmt.Fprintf(w, "%s_bucket%s %d\n", name, formatLabels(v.labels, v.order[k], "le", "+Inf"), h.count)
		fmt.Fprintf(w, "%s_sum%s %s\n", name, formatLabels(v.labels, v.order[k]), formatFloat(h.sum))
		fmt.Fprintf(w, "%s_count%s %d\n", name, formatLabels(v.labels, v.order[k]), h.count)
		h.mu.Unlock()
	}
}
