//go:build faults

package faults

import (
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// readmeMetrics returns the metric names of the README's metrics table.
func readmeMetrics(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(b), "\n## Metrics\n")
	section, _, _ = strings.Cut(section, "\n## ")
	var names []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z_:]+)` \\|").FindAllStringSubmatch(section, -1) {
		names = append(names, m[1])
	}
	if len(names) < 10 {
		t.Fatalf("README's metrics table gave %d names: %v", len(names), names)
	}
	return names
}

// checkMetrics scrapes every process of a running system and checks that
// together they export what the README's metrics table lists, nothing of
// Surveyor's it does not, and the Go runtime and process metrics. A worker
// counts a job after storing its end, so it scrapes again for a while.
func checkMetrics(t *testing.T, endpoints []string) {
	t.Helper()
	documented := readmeMetrics(t)
	var missing []string
	var exported map[string]bool
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		exported, missing = scrape(t, endpoints), nil
		for _, name := range documented {
			if !exported[name] {
				missing = append(missing, name)
			}
		}
		if len(missing) == 0 || time.Now().After(deadline) {
			break
		}
	}
	for _, name := range missing {
		t.Errorf("the README lists %s; no process exports it", name)
	}
	for name := range exported {
		if strings.HasPrefix(name, "surveyor_") && !slices.Contains(documented, name) {
			t.Errorf("%s is exported but not in the README's metrics table", name)
		}
	}
}

// scrape returns the metric families the endpoints export together, and
// checks that each parses and has the Go runtime and process metrics.
func scrape(t *testing.T, endpoints []string) map[string]bool {
	t.Helper()
	exported := map[string]bool{}
	for _, url := range endpoints {
		res, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		parser := expfmt.NewTextParser(model.LegacyValidation)
		families, err := parser.TextToMetricFamilies(res.Body)
		res.Body.Close()
		if err != nil {
			t.Fatalf("%s does not parse: %v", url, err)
		}
		for _, want := range []string{"go_goroutines", "process_cpu_seconds_total"} {
			if families[want] == nil {
				t.Fatalf("%s lacks %s", url, want)
			}
		}
		for name := range families {
			exported[name] = true
		}
	}
	return exported
}
