package worker

import (
	"context"
	"errors"
	"testing"

	"github.com/surveyor/surveyor/pkg/job"
)

func TestMeasureObservesWhatTheAttemptLeadsTo(t *testing.T) {
	const kind = job.Kind("measure-test") // a series no other test touches
	count := func(outcome string) float64 {
		return metric(t, `surveyor_job_duration_seconds_count{kind="measure-test",outcome="`+outcome+`"}`)
	}
	stopped, cancel := context.WithCancel(context.Background())
	cancel()
	cases := []struct {
		name    string
		ctx     context.Context
		attempt int
		h       HandlerFunc
		outcome string // "" for none
	}{
		{"success", context.Background(), 1, succeed("ok"), "completed"},
		{"failure with attempts left", context.Background(), 1, fail(errors.New("x")), "retry"},
		{"failure on the last attempt", context.Background(), 3, fail(errors.New("x")), "failed"},
		{"permanent failure", context.Background(), 1, fail(Permanent(errors.New("x"))), "failed"},
		{"cut short by shutdown", stopped, 1, fail(context.Canceled), ""},
	}
	outcomes := []string{"completed", "retry", "failed"}
	for _, c := range cases {
		before := map[string]float64{}
		for _, o := range outcomes {
			before[o] = count(o)
		}
		j := newJob(kind, c.attempt)
		run(c.ctx, measure(3), j, c.h)
		for _, o := range outcomes {
			want := 0.0
			if o == c.outcome {
				want = 1
			}
			if got := count(o) - before[o]; got != want {
				t.Errorf("%s: %v observations as %q, want %v", c.name, got, o, want)
			}
		}
	}
}

func TestCountersStartAtZeroForTheKind(t *testing.T) {
	const kind = job.Kind("zero-test")
	registerMetrics(kind, func() uint64 { return 0 })
	for _, series := range []string{
		`surveyor_jobs_total{kind="zero-test",status="completed"}`,
		`surveyor_jobs_total{kind="zero-test",status="failed"}`,
		`surveyor_job_retries_total{kind="zero-test"}`,
		`surveyor_deadletters_total{kind="zero-test"}`,
	} {
		if !exported(t, series) {
			t.Errorf("%s is not exported before any job", series)
		}
	}
}
