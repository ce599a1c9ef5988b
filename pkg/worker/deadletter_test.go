package worker

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/surveyor/surveyor/pkg/bus"
	"github.com/surveyor/surveyor/pkg/job"
)

// deadLettered is the copy of the job in DEADLETTER, nil if there is none.
func (e *testEnv) deadLettered(t *testing.T, k job.Kind) *job.Job {
	t.Helper()
	stream, err := e.JS.Stream(context.Background(), bus.DeadLetterStream)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := stream.GetLastMsgForSubject(context.Background(), bus.DeadLetterSubject(k))
	if err != nil {
		return nil
	}
	var j job.Job
	if err := j.UnmarshalJSON(msg.Data); err != nil {
		t.Fatal(err)
	}
	if h := msg.Header.Get("Surveyor-Job-Id"); h != j.ID {
		t.Fatalf("header Surveyor-Job-Id %q for job %s", h, j.ID)
	}
	return &j
}

func TestDeadLetterEndsFinalFailures(t *testing.T) {
	cases := map[string]struct {
		attempt int
		err     error
	}{
		"permanent on the first attempt": {1, Permanent(errors.New("refused target"))},
		"any error on the last attempt":  {3, errors.New("timeout")},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			e := newTestEnv(t)
			events := e.events(t, job.Sitemap)
			dead := metric(t, `surveyor_deadletters_total{kind="sitemap"}`)
			failed := metric(t, `surveyor_jobs_total{kind="sitemap",status="failed"}`)
			j := newJob(job.Sitemap, c.attempt)
			result, err := run(context.Background(), deadLetter(e.rec, 3, time.Second, quiet), j, fail(c.err))
			if result != nil || err != nil {
				t.Fatalf("got %v, %v; want an acknowledgement", result, err)
			}
			dl := e.deadLettered(t, job.Sitemap)
			if dl == nil || dl.ID != j.ID || dl.Status != job.Failed || dl.Error != c.err.Error() || dl.Finished == nil {
				t.Fatalf("dead letter %+v", dl)
			}
			if final, err := e.store.Get(context.Background(), j.ID); err != nil || final.Status != job.Failed || final.Error != c.err.Error() {
				t.Fatalf("stored %+v (%v)", final, err)
			}
			if ev := next(t, events); ev.Status != job.Failed {
				t.Fatalf("announced %+v", ev)
			}
			if metric(t, `surveyor_deadletters_total{kind="sitemap"}`)-dead != 1 ||
				metric(t, `surveyor_jobs_total{kind="sitemap",status="failed"}`)-failed != 1 {
				t.Fatal("the failure was not counted once")
			}
		})
	}
}

func TestDeadLetterPassesOnWhatIsNotFinal(t *testing.T) {
	e := newTestEnv(t)
	decided := requeue(time.Second, errors.New("handed back"))
	for _, err := range []error{errors.New("timeout"), decided} {
		j := newJob(job.Sitemap, 2)
		if _, got := run(context.Background(), deadLetter(e.rec, 3, time.Second, quiet), j, fail(err)); got != err {
			t.Fatalf("got %v, want %v unchanged", got, err)
		}
	}
	// The last attempt of a job already handed back is no failure either.
	if _, got := run(context.Background(), deadLetter(e.rec, 3, time.Second, quiet), newJob(job.Sitemap, 3), fail(decided)); got != decided {
		t.Fatalf("got %v", got)
	}
	if dl := e.deadLettered(t, job.Sitemap); dl != nil {
		t.Fatalf("dead-lettered %+v", dl)
	}
}

func TestDeadLetterHandsBackWhenItCannotStore(t *testing.T) {
	b := newTestEnv(t).broken(t)
	_, err := run(context.Background(), deadLetter(b.rec, 3, 5*time.Second, quiet), newJob(job.Sitemap, 1), fail(Permanent(errors.New("bad"))))
	if d, ok := requeuedAfter(err); !ok || d != 5*time.Second {
		t.Fatalf("got %v; want the job handed back after 5s", err)
	}
}
