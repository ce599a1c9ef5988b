package worker

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/surveyor/surveyor/pkg/job"
)

// recoverPanics turns a handler's panic into an error: the attempt fails
// like any other (retried, then dead-lettered) and the worker lives on.
func recoverPanics(log *slog.Logger) Middleware {
	return func(next Handler) Handler {
		return HandlerFunc(func(ctx context.Context, j *job.Job, p Progress) (result any, err error) {
			defer func() {
				if v := recover(); v != nil {
					jobLog(log, j).Error("handler panic", "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
					result, err = nil, fmt.Errorf("internal error: handler panicked: %v", v)
				}
			}()
			return next.Handle(ctx, j, p)
		})
	}
}
