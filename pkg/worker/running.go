package worker

import (
	"context"
	"log/slog"
	"time"

	"github.com/surveyor/surveyor/pkg/job"
)

// markRunning records that this attempt has started before the handler
// runs, so GET shows the job running with its start time and attempt. If
// the status cannot be stored the job goes back to the queue unrun, after
// retryDelay.
func markRunning(rec *recorder, retryDelay time.Duration, log *slog.Logger) Middleware {
	return func(next Handler) Handler {
		return HandlerFunc(func(ctx context.Context, j *job.Job, p Progress) (any, error) {
			now := time.Now().UTC()
			j.Status, j.Started = job.Running, &now
			j.Error, j.Result, j.Finished = "", nil, nil
			if err := rec.record(ctx, j); err != nil {
				jobLog(log, j).Warn("cannot record running status", "err", err)
				return nil, requeue(retryDelay, err)
			}
			return next.Handle(ctx, j, p)
		})
	}
}
