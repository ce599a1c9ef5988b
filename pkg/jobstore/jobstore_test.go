package jobstore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/surveyor/surveyor/pkg/bus"
	"github.com/surveyor/surveyor/pkg/bus/bustest"
	"github.com/surveyor/surveyor/pkg/job"
	"github.com/surveyor/surveyor/pkg/jobstore"
)

// Each status change is stored as one document, which Put and Finish
// return for the worker to announce, and a job's final document in RESULTS
// is exactly its full encoding: the status document with the result added.
func TestStatusChangesAreStoredAsOneDocument(t *testing.T) {
	env := bustest.Start(t, bus.Config{})
	ctx := context.Background()
	store, err := jobstore.Open(ctx, env.JS)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	j := &job.Job{ID: "0d9c5a34-3f3e-4b52-9a5b-8f8f6b0c2a11", Kind: job.Sitemap, Status: job.Running,
		URL: "https://a.example/?q=<b>&c", MaxPages: 10, Created: now, Started: &now, Attempts: 1}

	// checkStatus checks the returned document and the bucket against the
	// job without its result.
	checkStatus := func(when string, doc []byte) {
		t.Helper()
		c := *j
		c.Result = nil
		want := c.AppendJSON(nil)
		e, err := store.KV().Get(ctx, j.ID)
		if err != nil || !bytes.Equal(e.Value(), want) || !bytes.Equal(doc, want) {
			t.Fatalf("%s: bucket holds %s (%v), returned %s, want %s", when, e.Value(), err, doc, want)
		}
	}
	doc, err := store.Put(ctx, j)
	if err != nil {
		t.Fatal(err)
	}
	checkStatus("running", doc)
	if got, err := store.Get(ctx, j.ID); err != nil || got.Status != job.Running || got.URL != j.URL {
		t.Fatalf("Get of the running job: %+v %v", got, err)
	}

	done := now.Add(time.Second)
	j.Status, j.Finished, j.Result = job.Completed, &done, json.RawMessage(`{"page_count":1,"pages":[{"url":"https://a.example/"}]}`)
	if doc, err = store.Finish(ctx, j); err != nil {
		t.Fatal(err)
	}
	checkStatus("completed", doc)
	s, err := env.JS.Stream(ctx, bus.ResultsStream)
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.GetLastMsgForSubject(ctx, "results.sitemap."+j.ID)
	if err != nil || !bytes.Equal(m.Data, j.AppendJSON(nil)) {
		t.Fatalf("RESULTS holds %s (%v), want %s", m.Data, err, j.AppendJSON(nil))
	}
	for _, get := range []func() (*job.Job, error){
		func() (*job.Job, error) { return store.Get(ctx, j.ID) },
		func() (*job.Job, error) { return store.Final(ctx, job.Sitemap, j.ID) },
	} {
		got, err := get()
		if err != nil || !bytes.Equal(got.AppendJSON(nil), j.AppendJSON(nil)) {
			t.Fatalf("read back %+v %v", got, err)
		}
	}
	if _, err := store.Final(ctx, job.Scan, j.ID); !errors.Is(err, jobstore.ErrNotFound) {
		t.Fatalf("Final under another kind: %v", err)
	}
	if _, err := store.Status(ctx, "5f0e7c1a-8d2b-4c3e-9f4a-1b2c3d4e5f60"); !errors.Is(err, jobstore.ErrNotFound) {
		t.Fatalf("Status of an unknown id: %v", err)
	}
}

// A dead-lettered job's one document lands in DEADLETTER (with its id in a
// header), in RESULTS and in the bucket, in that order of storing.
func TestDeadLetterStoresOneDocumentThreeTimes(t *testing.T) {
	env := bustest.Start(t, bus.Config{})
	ctx := context.Background()
	store, err := jobstore.Open(ctx, env.JS)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	j := &job.Job{ID: "6f1c2b7e-0c55-4a8e-9d0b-2a8d1e4f9c33", Kind: job.Email, Status: job.Failed,
		Email: "a@b.example", Created: now, Started: &now, Finished: &now, Attempts: 3, Error: "no answer"}
	want := j.AppendJSON(nil)
	doc, err := store.DeadLetter(ctx, j)
	if err != nil || !bytes.Equal(doc, want) {
		t.Fatalf("returned %s (%v), want %s", doc, err, want)
	}
	for _, c := range []struct{ stream, subject string }{
		{bus.DeadLetterStream, bus.DeadLetterSubject(j.Kind)},
		{bus.ResultsStream, bus.ResultSubject(j.Kind, j.ID)},
	} {
		s, err := env.JS.Stream(ctx, c.stream)
		if err != nil {
			t.Fatal(err)
		}
		m, err := s.GetLastMsgForSubject(ctx, c.subject)
		if err != nil || !bytes.Equal(m.Data, want) {
			t.Fatalf("%s holds %v (%v), want %s", c.subject, m, err, want)
		}
		if c.stream == bus.DeadLetterStream && m.Header.Get(bus.JobIDHeader) != j.ID {
			t.Fatalf("dead letter's id header %q", m.Header.Get(bus.JobIDHeader))
		}
	}
	if e, err := store.KV().Get(ctx, j.ID); err != nil || !bytes.Equal(e.Value(), want) {
		t.Fatalf("bucket holds %v (%v), want %s", e, err, want)
	}
}
