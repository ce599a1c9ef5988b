package worker

import (
	"context"
	"testing"
	"time"

	"github.com/surveyor/surveyor/pkg/job"
)

func TestSkipFinishedAcksRedeliveryOfEndedJob(t *testing.T) {
	e := newTestEnv(t)
	for _, status := range []job.Status{job.Completed, job.Failed} {
		j := newJob(job.Scan, 2)
		ended := *j
		now := time.Now().UTC()
		ended.Status, ended.Finished = status, &now
		if _, err := e.store.Put(context.Background(), &ended); err != nil {
			t.Fatal(err)
		}
		result, err := run(context.Background(), skipFinished(e.store, quiet), j, mustNotRun(t))
		if result != nil || err != nil {
			t.Fatalf("%s job: got %v, %v; want an acknowledgement", status, result, err)
		}
	}
}

func TestSkipFinishedRunsJobsThatHaveNotEnded(t *testing.T) {
	e := newTestEnv(t)
	running := newJob(job.Scan, 2)
	running.Status = job.Running
	if _, err := e.store.Put(context.Background(), running); err != nil {
		t.Fatal(err)
	}
	// A first delivery is never looked up: its status, were it there,
	// would be a left-over, not this job's end.
	first := newJob(job.Scan, 1)
	first.Status = job.Completed
	if _, err := e.store.Put(context.Background(), first); err != nil {
		t.Fatal(err)
	}
	unknown := newJob(job.Scan, 3)
	for _, j := range []*job.Job{running, first, unknown} {
		j.Status = job.Queued
		ran := false
		run(context.Background(), skipFinished(e.store, quiet), j, func(context.Context, *job.Job, Progress) (any, error) {
			ran = true
			return nil, nil
		})
		if !ran {
			t.Errorf("attempt %d was skipped", j.Attempts)
		}
	}
}
