package worker

import (
	"context"
	"log/slog"
	"time"

	"github.com/surveyor/surveyor/pkg/job"
)

// deadLetter ends a job whose error is final: marked Permanent, or on its
// last allowed attempt. The failed document goes to DEADLETTER, then to
// RESULTS and the status, and the delivery is acknowledged. If any of that
// cannot be stored the delivery comes back after retryDelay.
func deadLetter(rec *recorder, maxDeliver int, retryDelay time.Duration, log *slog.Logger) Middleware {
	return func(next Handler) Handler {
		return HandlerFunc(func(ctx context.Context, j *job.Job, p Progress) (any, error) {
			result, cause := next.Handle(ctx, j, p)
			if !undecided(cause) || !final(j, cause, maxDeliver) {
				return result, cause
			}
			log := jobLog(log, j)
			now := time.Now().UTC()
			j.Status, j.Finished, j.Error, j.Result, j.Progress = job.Failed, &now, cause.Error(), nil, nil
			if err := rec.deadLetter(ctx, j); err != nil {
				log.Error("cannot dead-letter: will retry", "err", err)
				return nil, requeue(retryDelay, err)
			}
			deadTotal.With(string(j.Kind)).Inc()
			jobsTotal.With(string(j.Kind), string(job.Failed)).Inc()
			log.Warn("job failed", "err", cause)
			return nil, nil
		})
	}
}

// final reports whether err ends the job: no retry can fix it, or this was
// the last attempt allowed.
func final(j *job.Job, err error, maxDeliver int) bool {
	return IsPermanent(err) || j.Attempts >= maxDeliver
}
