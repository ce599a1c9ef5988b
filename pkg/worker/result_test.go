package worker

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/surveyor/surveyor/pkg/job"
)

func TestStoreResultCompletesTheJob(t *testing.T) {
	e := newTestEnv(t)
	events := e.events(t, job.Email)
	series := `surveyor_jobs_total{kind="email",status="completed"}`
	before := metric(t, series)
	j := newJob(job.Email, 1)
	j.Status = job.Running
	result, err := run(context.Background(), storeResult(e.rec, time.Second, quiet), j, succeed(map[string]string{"reachable": "safe"}))
	if result != nil || err != nil {
		t.Fatalf("got %v, %v; want an acknowledgement", result, err)
	}
	final, err := e.store.Get(context.Background(), j.ID)
	if err != nil || final.Status != job.Completed || final.Finished == nil || string(final.Result) != `{"reachable":"safe"}` {
		t.Fatalf("stored %+v (%v)", final, err)
	}
	if ev := next(t, events); ev.Status != job.Completed {
		t.Fatalf("announced %+v", ev)
	}
	if got := metric(t, series) - before; got != 1 {
		t.Fatalf("completions counted %v, want 1", got)
	}
}

func TestStoreResultFailures(t *testing.T) {
	e := newTestEnv(t)
	cause := errors.New("timeout")
	if _, err := run(context.Background(), storeResult(e.rec, time.Second, quiet), newJob(job.Email, 1), fail(cause)); err != cause {
		t.Fatalf("a handler error: got %v, want it unchanged", err)
	}
	_, err := run(context.Background(), storeResult(e.rec, time.Second, quiet), newJob(job.Email, 1), succeed(func() {}))
	if !IsPermanent(err) {
		t.Fatalf("a result that cannot be encoded: got %v, want a permanent error", err)
	}
	b := e.broken(t)
	_, err = run(context.Background(), storeResult(b.rec, 4*time.Second, quiet), newJob(job.Email, 1), succeed("fine"))
	if d, ok := requeuedAfter(err); !ok || d != 4*time.Second {
		t.Fatalf("a result that cannot be stored: got %v, want the job handed back after 4s", err)
	}
}
