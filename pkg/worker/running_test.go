package worker

import (
	"context"
	"testing"
	"time"

	"github.com/surveyor/surveyor/pkg/job"
)

func TestMarkRunningRecordsBeforeTheHandler(t *testing.T) {
	e := newTestEnv(t)
	events := e.events(t, job.Email)
	j := newJob(job.Email, 3)
	j.Error = "left from the attempt before"
	var seen *job.Job
	_, err := run(context.Background(), markRunning(e.rec, time.Second, quiet), j, func(context.Context, *job.Job, Progress) (any, error) {
		seen = e.status(t, j.ID)
		return nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen.Status != job.Running || seen.Started == nil || seen.Attempts != 3 || seen.Error != "" {
		t.Fatalf("the handler ran while the status was %+v", seen)
	}
	if ev := next(t, events); ev.ID != j.ID || ev.Status != job.Running {
		t.Fatalf("event %+v", ev)
	}
}

func TestMarkRunningHandsBackWhenStatusCannotBeStored(t *testing.T) {
	b := newTestEnv(t).broken(t)
	_, err := run(context.Background(), markRunning(b.rec, 3*time.Second, quiet), newJob(job.Email, 1), mustNotRun(t))
	if d, ok := requeuedAfter(err); !ok || d != 3*time.Second {
		t.Fatalf("got %v; want the job handed back after 3s", err)
	}
}
