package worker

import (
	"context"
	"errors"

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
