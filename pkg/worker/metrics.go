package worker

import (
	"context"
	"time"

	"github.com/surveyor/surveyor/pkg/job"
	"github.com/surveyor/surveyor/pkg/obs"
)

// The worker's metrics (README, Metrics). Each is counted where its event
// happens: jobsTotal in storeResult and deadLetter, retriesTotal in retry,
// deadTotal in deadLetter, jobSeconds in measure.
var (
	jobsTotal = obs.Default.NewCounterVec("surveyor_jobs_total",
		"Jobs that ended, by kind and final status.", "kind", "status")
	retriesTotal = obs.Default.NewCounterVec("surveyor_job_retries_total",
		"Job attempts that failed and were scheduled again.", "kind")
	deadTotal = obs.Default.NewCounterVec("surveyor_deadletters_total",
		"Jobs moved to DEADLETTER after their last attempt.", "kind")
	jobSeconds = obs.Default.NewHistogramVec("surveyor_job_duration_seconds",
		"Time a handler spent on one attempt, by kind and outcome.", obs.DurationBuckets, "kind", "outcome")
)

// registerMetrics exports the kind's consumer backlog, read at scrape time,
// and starts the kind's counters at zero: a series that appears only at its
// first event hides a rate from dashboards and alerts until then.
func registerMetrics(k job.Kind, pending func() uint64) {
	for _, s := range []job.Status{job.Completed, job.Failed} {
		jobsTotal.With(string(k), string(s))
	}
	retriesTotal.With(string(k))
	deadTotal.With(string(k))
	obs.Default.NewGaugeFunc("surveyor_consumer_pending",
		"Jobs waiting for or held by the kind's consumer, as last read.", "kind",
		func() map[string]float64 { return map[string]float64{string(k): float64(pending())} })
}

// measure times the handler and observes the attempt under what its error
// makes of the job: "completed", "retry" or "failed". An attempt cut short
// by shutdown is handed back, which is no outcome, and is not observed.
func measure(maxDeliver int) Middleware {
	return func(next Handler) Handler {
		return HandlerFunc(func(ctx context.Context, j *job.Job, p Progress) (any, error) {
			start := time.Now()
			result, err := next.Handle(ctx, j, p)
			var outcome string
			switch {
			case err == nil:
				outcome = "completed"
			case stopping(ctx, err):
				return result, err
			case final(j, err, maxDeliver):
				outcome = "failed"
			default:
				outcome = "retry"
			}
			jobSeconds.With(string(j.Kind), outcome).Observe(time.Since(start).Seconds())
			return result, err
		})
	}
}
