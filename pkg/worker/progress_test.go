package worker

import (
	"context"
	"testing"
	"time"

	"github.com/surveyor/surveyor/pkg/job"
)

// progressOf is the job's stored progress.
func (e *testEnv) progressOf(t *testing.T, id string) string {
	t.Helper()
	return string(e.status(t, id).Progress)
}

func TestProgressStoresFirstReportAtOnceAndThrottlesTheRest(t *testing.T) {
	e := newTestEnv(t)
	j := newJob(job.Sitemap, 1)
	j.Status = job.Running
	_, err := run(context.Background(), reportProgress(e.rec, time.Hour, quiet), j, func(ctx context.Context, j *job.Job, p Progress) (any, error) {
		p.Report(map[string]int{"pages": 1})
		if got := e.progressOf(t, j.ID); got != `{"pages":1}` {
			t.Errorf("after the first report: %q", got)
		}
		p.Report(map[string]int{"pages": 2})
		p.Report(map[string]int{"pages": 3})
		return nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got := e.status(t, j.ID)
	if string(got.Progress) != `{"pages":1}` || got.Status != job.Running {
		t.Fatalf("reports within the interval were stored: %+v", got)
	}
}

func TestProgressStoresTheLastReportAfterTheInterval(t *testing.T) {
	e := newTestEnv(t)
	j := newJob(job.Sitemap, 1)
	run(context.Background(), reportProgress(e.rec, 50*time.Millisecond, quiet), j, func(ctx context.Context, j *job.Job, p Progress) (any, error) {
		for i := range 20 {
			p.Report(map[string]int{"pages": i})
		}
		deadline := time.Now().Add(5 * time.Second)
		for e.progressOf(t, j.ID) != `{"pages":19}` {
			if time.Now().After(deadline) {
				t.Fatalf("the last report was never stored: %s", e.progressOf(t, j.ID))
			}
			time.Sleep(10 * time.Millisecond)
		}
		return nil, nil
	})
}

func TestProgressStoresNothingOnceStopped(t *testing.T) {
	e := newTestEnv(t)
	j := newJob(job.Sitemap, 1)
	var p *progress
	run(context.Background(), reportProgress(e.rec, time.Hour, quiet), j, func(ctx context.Context, j *job.Job, pr Progress) (any, error) {
		p = pr.(*progress)
		p.Report(map[string]int{"pages": 1})
		p.Report(map[string]int{"pages": 2}) // waits for the interval
		return nil, nil
	})
	// The handler has returned: what its timer would do now must not
	// overwrite the final status that follows.
	p.flush()
	p.Report(map[string]int{"pages": 3})
	if got := e.progressOf(t, j.ID); got != `{"pages":1}` {
		t.Fatalf("stored %s after the handler returned", got)
	}
}
