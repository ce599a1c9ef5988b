package worker

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/surveyor/surveyor/pkg/job"
)

func TestRecoverTurnsPanicIntoRetryableError(t *testing.T) {
	result, err := run(context.Background(), recoverPanics(quiet), newJob(job.Scan, 1),
		func(context.Context, *job.Job, Progress) (any, error) { panic("boom") })
	if result != nil || err == nil || !strings.Contains(err.Error(), "handler panicked: boom") {
		t.Fatalf("got %v, %v", result, err)
	}
	if IsPermanent(err) || !undecided(err) {
		t.Fatal("a panic must be retried like any failure")
	}
}

func TestRecoverPassesResultsAndErrorsThrough(t *testing.T) {
	if result, err := run(context.Background(), recoverPanics(quiet), newJob(job.Scan, 1), succeed("fine")); result != "fine" || err != nil {
		t.Fatalf("got %v, %v", result, err)
	}
	cause := errors.New("plain failure")
	if _, err := run(context.Background(), recoverPanics(quiet), newJob(job.Scan, 1), fail(cause)); err != cause {
		t.Fatalf("got %v, want the handler's own error", err)
	}
}
