package worker

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/surveyor/surveyor/pkg/job"
)

func TestRecordStoresAndAnnouncesStatusWithoutResult(t *testing.T) {
	e := newTestEnv(t)
	events := e.events(t, job.Scan)
	j := newJob(job.Scan, 1)
	j.Status, j.Progress, j.Result = job.Running, json.RawMessage(`{"step":1}`), json.RawMessage(`{"big":true}`)
	if err := e.rec.record(context.Background(), j); err != nil {
		t.Fatal(err)
	}
	if got := e.status(t, j.ID); got.Status != job.Running || got.Result != nil || string(got.Progress) != `{"step":1}` {
		t.Fatalf("stored %+v", got)
	}
	// The event is the stored document: one encoding per change of status.
	if ev := next(t, events); ev.ID != j.ID || ev.Status != job.Running || ev.Result != nil || string(ev.Progress) != `{"step":1}` {
		t.Fatalf("announced %+v", ev)
	}
}

func TestFinishStoresResultThenStatus(t *testing.T) {
	e := newTestEnv(t)
	events := e.events(t, job.Sitemap)
	j := newJob(job.Sitemap, 1)
	now := time.Now().UTC()
	j.Status, j.Finished, j.Result = job.Completed, &now, json.RawMessage(`{"page_count":3}`)
	if err := e.rec.finish(context.Background(), j); err != nil {
		t.Fatal(err)
	}
	final, err := e.store.Final(context.Background(), job.Sitemap, j.ID)
	if err != nil || final.Status != job.Completed || string(final.Result) != `{"page_count":3}` {
		t.Fatalf("RESULTS holds %+v (%v)", final, err)
	}
	if got := e.status(t, j.ID); got.Status != job.Completed || got.Result != nil {
		t.Fatalf("status %+v", got)
	}
	if ev := next(t, events); ev.ID != j.ID || ev.Status != job.Completed || ev.Result != nil {
		t.Fatalf("announced %+v", ev)
	}
}

func TestProgressIsStoredButNotAnnounced(t *testing.T) {
	e := newTestEnv(t)
	events := e.events(t, job.Sitemap)
	j := newJob(job.Sitemap, 1)
	j.Status, j.Progress = job.Running, json.RawMessage(`{"pages_fetched":7}`)
	if err := e.rec.progress(context.Background(), j); err != nil {
		t.Fatal(err)
	}
	if got := e.status(t, j.ID); string(got.Progress) != `{"pages_fetched":7}` {
		t.Fatalf("stored %+v", got)
	}
	// Events from one connection arrive in order: if progress had been
	// announced, it would come before this one.
	other := newJob(job.Sitemap, 1)
	if err := e.rec.record(context.Background(), other); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, events); ev.ID != other.ID {
		t.Fatalf("progress of %s was announced", ev.ID)
	}
}
