package worker

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/surveyor/surveyor/pkg/job"
)

func TestRetryRequeuesWithBackoffOfTheAttempt(t *testing.T) {
	e := newTestEnv(t)
	events := e.events(t, job.Scan)
	series := `surveyor_job_retries_total{kind="scan"}`
	before := metric(t, series)
	backoff := func(n int) time.Duration { return time.Duration(n) * time.Minute }
	j := newJob(job.Scan, 2)
	now := time.Now().UTC()
	j.Status, j.Started = job.Running, &now
	cause := errors.New("connection reset")
	_, err := run(context.Background(), retry(e.rec, backoff, quiet), j, fail(cause))
	if d, ok := requeuedAfter(err); !ok || d != 2*time.Minute || !errors.Is(err, cause) {
		t.Fatalf("got %v; want the cause handed back after backoff(2)", err)
	}
	if got := e.status(t, j.ID); got.Status != job.Queued || got.Started != nil {
		t.Fatalf("status %+v", got)
	}
	if ev := next(t, events); ev.Status != job.Queued {
		t.Fatalf("announced %+v", ev)
	}
	if got := metric(t, series) - before; got != 1 {
		t.Fatalf("retries counted %v, want 1", got)
	}
}

func TestRetryLeavesDecidedOutcomesAlone(t *testing.T) {
	e := newTestEnv(t)
	decided := requeue(time.Second, errors.New("result not stored"))
	for _, h := range []HandlerFunc{succeed(nil), fail(decided)} {
		j := newJob(job.Scan, 1)
		_, err := run(context.Background(), retry(e.rec, ExponentialBackoff(time.Second, time.Minute), quiet), j, h)
		if err != nil && err != decided {
			t.Fatalf("got %v", err)
		}
		if _, err := e.store.Status(context.Background(), j.ID); err == nil {
			t.Fatal("a status was recorded for an outcome retry does not own")
		}
	}
}

func TestExponentialBackoff(t *testing.T) {
	b := ExponentialBackoff(time.Second, time.Minute)
	for n, want := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second,
		6: 32 * time.Second, 7: time.Minute, 100: time.Minute} {
		if got := b(n); got != want {
			t.Errorf("retry %d: %s, want %s", n, got, want)
		}
	}
}
