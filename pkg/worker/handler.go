package worker

import (
	"context"
	"errors"
	"log/slog"

	"github.com/surveyor/surveyor/pkg/job"
)

// Handler does the work of one job and returns its result document, which
// the runtime marshals into the job's "result". An error is retried with
// backoff up to the delivery limit unless it is marked Permanent.
type Handler interface {
	Handle(ctx context.Context, j *job.Job, p Progress) (result any, err error)
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, j *job.Job, p Progress) (any, error)

// Handle calls f.
func (f HandlerFunc) Handle(ctx context.Context, j *job.Job, p Progress) (any, error) {
	return f(ctx, j, p)
}

// Middleware wraps a Handler with one concern of the runtime: recording
// status, retrying, dead-lettering, measuring. Each reads the job and the
// error on their way through and may change either.
type Middleware func(Handler) Handler

// chain wraps h in mws, the first outermost: it sees the job first and the
// outcome last.
func chain(h Handler, mws ...Middleware) Handler {
	for i := len(mws) - 1; i >= 0; i-- {
		h = mws[i](h)
	}
	return h
}

// jobLog is log with the job's id, kind and attempt.
func jobLog(log *slog.Logger, j *job.Job) *slog.Logger {
	return log.With("job_id", j.ID, "kind", j.Kind, "attempt", j.Attempts)
}

// Progress lets a long job show how far it got. Report stores v as the
// job's "progress" where GET can see it; calls are throttled by the runtime,
// so a handler may call it as often as it likes.
type Progress interface {
	Report(v any)
}

// permanentError marks an error that no retry can fix.
type permanentError struct{ err error }

func (e permanentError) Error() string { return e.err.Error() }
func (e permanentError) Unwrap() error { return e.err }

// Permanent marks err as final: the job fails at once, without retries.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return permanentError{err}
}

// IsPermanent reports whether err was marked by Permanent.
func IsPermanent(err error) bool {
	var p permanentError
	return errors.As(err, &p)
}
