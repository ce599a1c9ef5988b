package worker

import (
	"context"
	"log/slog"
	"time"

	"github.com/surveyor/surveyor/pkg/job"
)

// retry puts a job whose attempt failed back in the queue: its status says
// queued again and the delivery comes back after backoff(attempt). Errors
// that end the job never reach it: deadLetter, inside it, takes those.
func retry(rec *recorder, backoff func(attempt int) time.Duration, log *slog.Logger) Middleware {
	return func(next Handler) Handler {
		return HandlerFunc(func(ctx context.Context, j *job.Job, p Progress) (any, error) {
			result, err := next.Handle(ctx, j, p)
			if !undecided(err) {
				return result, err
			}
			retriesTotal.With(string(j.Kind)).Inc()
			delay := backoff(j.Attempts)
			log := jobLog(log, j)
			log.Warn("attempt failed: will retry", "err", err, "delay", delay.String())
			j.Status, j.Started, j.Error = job.Queued, nil, ""
			if err := rec.record(ctx, j); err != nil {
				log.Warn("cannot record queued status", "err", err)
			}
			return nil, requeue(delay, err)
		})
	}
}

// ExponentialBackoff doubles from base up to max.
func ExponentialBackoff(base, max time.Duration) func(int) time.Duration {
	return func(n int) time.Duration {
		d := base
		for i := 1; i < n && d < max; i++ {
			d *= 2
		}
		return min(d, max)
	}
}
