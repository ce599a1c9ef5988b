package worker

import (
	"context"
	"log/slog"
	"time"

	"github.com/surveyor/surveyor/pkg/job"
)

// handBackDelay is how soon a job handed back at shutdown may be delivered
// again, to another worker.
const handBackDelay = time.Second

// handBack returns a job to the queue when its attempt ended because the
// worker is stopping (its context was cancelled after the grace period):
// that is no failure of the job, so it is neither retried with backoff nor
// dead-lettered. A permanent error still ends the job.
func handBack(rec *recorder, log *slog.Logger) Middleware {
	return func(next Handler) Handler {
		return HandlerFunc(func(ctx context.Context, j *job.Job, p Progress) (any, error) {
			result, err := next.Handle(ctx, j, p)
			if !undecided(err) || !stopping(ctx, err) {
				return result, err
			}
			log := jobLog(log, j)
			log.Info("returning job to the queue at shutdown")
			j.Status, j.Started = job.Queued, nil
			if err := rec.record(context.WithoutCancel(ctx), j); err != nil {
				log.Warn("cannot record queued status", "err", err)
			}
			return nil, requeue(handBackDelay, err)
		})
	}
}

// stopping reports whether err is the worker stopping rather than the job
// failing.
func stopping(ctx context.Context, err error) bool {
	return ctx.Err() != nil && !IsPermanent(err)
}
