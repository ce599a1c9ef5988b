package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/surveyor/surveyor/pkg/job"
)

// storeResult completes a job whose handler succeeded: its result goes to
// RESULTS and the status, and only then is the delivery acknowledged. If
// that cannot be stored the delivery comes back after retryDelay (the
// attempt did not fail); a result that cannot be encoded fails the job.
func storeResult(rec *recorder, retryDelay time.Duration, log *slog.Logger) Middleware {
	return func(next Handler) Handler {
		return HandlerFunc(func(ctx context.Context, j *job.Job, p Progress) (any, error) {
			result, err := next.Handle(ctx, j, p)
			if err != nil {
				return nil, err
			}
			data, err := json.Marshal(result)
			if err != nil {
				return nil, Permanent(fmt.Errorf("result not encodable: %w", err))
			}
			now := time.Now().UTC()
			j.Status, j.Finished, j.Result, j.Progress = job.Completed, &now, data, nil
			if err := rec.finish(ctx, j); err != nil {
				jobLog(log, j).Error("cannot store result: will retry", "err", err)
				return nil, requeue(retryDelay, err)
			}
			jobsTotal.With(string(j.Kind), string(job.Completed)).Inc()
			jobLog(log, j).Info("job completed")
			return nil, nil
		})
	}
}
