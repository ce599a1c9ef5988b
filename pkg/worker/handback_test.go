package worker

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/surveyor/surveyor/pkg/job"
)

func TestHandBackAtShutdown(t *testing.T) {
	e := newTestEnv(t)
	events := e.events(t, job.Scan)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	j := newJob(job.Scan, 1)
	now := time.Now().UTC()
	j.Status, j.Started = job.Running, &now
	_, err := run(ctx, handBack(e.rec, quiet), j, fail(ctx.Err()))
	if d, ok := requeuedAfter(err); !ok || d != handBackDelay {
		t.Fatalf("got %v; want the job handed back", err)
	}
	// Stored although the attempt's context has ended.
	if got := e.status(t, j.ID); got.Status != job.Queued || got.Started != nil {
		t.Fatalf("status %+v", got)
	}
	if ev := next(t, events); ev.Status != job.Queued {
		t.Fatalf("announced %+v", ev)
	}
}

func TestHandBackOnlyWhenStopping(t *testing.T) {
	e := newTestEnv(t)
	stopped, cancel := context.WithCancel(context.Background())
	cancel()
	permanent := Permanent(errors.New("refused target"))
	plain := errors.New("timeout")
	cases := []struct {
		name string
		ctx  context.Context
		h    HandlerFunc
		want error
	}{
		{"a failure while running", context.Background(), fail(plain), plain},
		{"a permanent failure while stopping", stopped, fail(permanent), permanent},
		{"a success while stopping", stopped, succeed("done"), nil},
	}
	for _, c := range cases {
		j := newJob(job.Scan, 1)
		if _, err := run(c.ctx, handBack(e.rec, quiet), j, c.h); err != c.want {
			t.Errorf("%s: got %v, want %v", c.name, err, c.want)
		}
		if _, err := e.store.Status(context.Background(), j.ID); err == nil {
			t.Errorf("%s: a status was recorded", c.name)
		}
	}
}
