package worker

import (
	"context"
	"log/slog"

	"github.com/surveyor/surveyor/pkg/job"
	"github.com/surveyor/surveyor/pkg/jobstore"
)

// skipFinished acknowledges a redelivered job whose status says it has
// ended, without running it: the worker before stored its result and died
// before acknowledging, and a second result must not follow. A first
// delivery cannot be one (JOBS de-duplicates by job id), so it costs no read.
func skipFinished(store *jobstore.Store, log *slog.Logger) Middleware {
	return func(next Handler) Handler {
		return HandlerFunc(func(ctx context.Context, j *job.Job, p Progress) (any, error) {
			if j.Attempts > 1 {
				if cur, err := store.Status(ctx, j.ID); err == nil && cur.Status.Finished() {
					jobLog(log, j).Info("already finished: acknowledging redelivery")
					return nil, nil
				}
			}
			return next.Handle(ctx, j, p)
		})
	}
}
