package intake

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"

	"github.com/surveyor/surveyor/pkg/bus"
	"github.com/surveyor/surveyor/pkg/bus/bustest"
	"github.com/surveyor/surveyor/pkg/job"
	"github.com/surveyor/surveyor/pkg/jobstore"
)

// eventually retries cond until it holds or 5 s pass.
func eventually(t *testing.T, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// isQueued checks that GET at in shows want, still queued.
func isQueued(in *Intake, want *job.Job) func() error {
	return func() error {
		got, err := in.Get(context.Background(), want.Kind, want.ID)
		if err != nil {
			return err
		}
		if got.Status != job.Queued || got.URL != want.URL || !got.Created.Equal(want.Created) {
			return fmt.Errorf("GET shows %+v, want %+v", got, want)
		}
		return nil
	}
}

// submitOne stores a new scan of url and returns its job as JOBS holds it.
func submitOne(t *testing.T, in *Intake, url string) *job.Job {
	t.Helper()
	outs, _, err := in.Submit(context.Background(), []job.Request{scan(url)})
	if err != nil {
		t.Fatal(err)
	}
	if outs[0].Deduplicated {
		t.Fatalf("%s was not new", url)
	}
	j, err := in.Get(context.Background(), job.Scan, outs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func TestGetAnswersAJobThroughItsLife(t *testing.T) {
	env := bustest.Start(t, bus.Config{})
	in := startIntake(t, env)
	ctx := context.Background()
	gets := countDirectGets(t, env)
	j := submitOne(t, in, "https://life.example/")
	// Queued: from memory, only under its own kind.
	if err := isQueued(in, j)(); err != nil {
		t.Fatal(err)
	}
	if j.Options[0] != "technologies" || j.Kind != job.Scan {
		t.Fatalf("queued document %+v", j)
	}
	if _, err := in.Get(ctx, job.Email, j.ID); !errors.Is(err, jobstore.ErrNotFound) {
		t.Fatalf("GET as an email job: %v", err)
	}
	if n := gets(); n != 0 {
		t.Fatalf("GET of a waiting job asked the server %d times", n)
	}
	// A worker records running and announces it: one read of the bucket.
	store, err := jobstore.Open(ctx, env.JS)
	if err != nil {
		t.Fatal(err)
	}
	announce := func(doc []byte, err error) { // as the worker's recorder does
		t.Helper()
		if err == nil {
			err = env.Conn.Publish(bus.EventSubject(job.Scan), doc)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	running := *j
	now := time.Now().UTC()
	running.Status, running.Started, running.Attempts = job.Running, &now, 1
	announce(store.Put(ctx, &running))
	heard(t, in, j.ID, job.Running)
	if got, err := in.Get(ctx, job.Scan, j.ID); err != nil || got.Status != job.Running || got.Attempts != 1 {
		t.Fatalf("GET of the running job: %+v %v", got, err)
	}
	if n := gets(); n != 1 {
		t.Fatalf("GET of a running job asked the server %d times, want 1", n)
	}
	// Finished: one read of RESULTS, even once its status has expired.
	done := running
	done.Status, done.Finished, done.Result = job.Completed, &now, json.RawMessage(`{"title":"Life"}`)
	announce(store.Finish(ctx, &done))
	heard(t, in, j.ID, job.Completed)
	for _, when := range []string{"", " after its status expired"} {
		got, err := in.Get(ctx, job.Scan, j.ID)
		if err != nil || got.Status != job.Completed || string(got.Result) != `{"title":"Life"}` {
			t.Fatalf("GET%s: %+v %v", when, got, err)
		}
		if n := gets(); n != 1 {
			t.Fatalf("GET of a finished job%s asked the server %d times, want 1", when, n)
		}
		if err := store.KV().Purge(ctx, j.ID); err != nil {
			t.Fatal(err)
		}
	}
	// Never heard of: the bucket, then RESULTS.
	if _, err := in.Get(ctx, job.Scan, "6f1c1a8e-3d55-4d7b-9a53-5d2f1ad0c0de"); !errors.Is(err, jobstore.ErrNotFound) {
		t.Fatalf("GET of an unknown id: %v", err)
	}
	if n := gets(); n != 2 {
		t.Fatalf("GET of an unknown id asked the server %d times, want 2", n)
	}
}

// countDirectGets returns a function that reports how many direct gets of
// the status bucket and RESULTS (what GET may read) the server received
// since it was last called.
func countDirectGets(t *testing.T, env *bustest.Env) func() int {
	t.Helper()
	nc, _ := env.Connect(t, "observer")
	seen := make(chan *nats.Msg, 64)
	for _, stream := range []string{bus.StatusStream, bus.ResultsStream} {
		if _, err := nc.ChanSubscribe("$JS.API.DIRECT.GET."+stream+".>", seen); err != nil {
			t.Fatal(err)
		}
	}
	return func() int {
		t.Helper()
		// The server forwards a copy of each request before it answers,
		// so once a round trip returns every copy is in the channel.
		if err := nc.Flush(); err != nil {
			t.Fatal(err)
		}
		n := len(seen)
		for range n {
			<-seen
		}
		return n
	}
}

// heard waits until in has heard the worker's event of the job's status.
func heard(t *testing.T, in *Intake, id string, want job.Status) {
	t.Helper()
	eventually(t, "the worker's event", func() error {
		if w, s, _ := in.known.lookup(uuid.MustParse(id)); w.doc != nil || s.status != want {
			return fmt.Errorf("status %q, waiting %v", s.status, w.doc != nil)
		}
		return nil
	})
}

func TestSecondReplicaLearnsAcceptsFromTheAnnouncement(t *testing.T) {
	env := bustest.Start(t, bus.Config{})
	first := startIntake(t, env)
	// Accepted before the second replica starts: it learns this one from
	// its JOBS scan, which then is over.
	before := submitOne(t, first, "https://before.example/")
	_, js := env.Connect(t, "second") // another process, over TCP
	second, _ := runIntake(t, js)
	eventually(t, "GET at the second replica after its scan", isQueued(second, before))
	// So this one can only come from the first replica's announcement.
	j := submitOne(t, first, "https://replica.example/")
	eventually(t, "GET at the second replica", isQueued(second, j))
	again, _, err := second.Submit(context.Background(), []job.Request{scan("https://replica.example/")})
	if err != nil {
		t.Fatal(err)
	}
	if !again[0].Deduplicated || again[0].ID != j.ID {
		t.Fatalf("repeat at the second replica got %+v, want job %s", again[0], j.ID)
	}
}

func TestFreshStartLearnsWaitingJobsFromJOBS(t *testing.T) {
	env := bustest.Start(t, bus.Config{})
	_, js := env.ConnectInProcess(t, "first")
	first, stopFirst := runIntake(t, js)
	// Jobs with gaps where workers took some (deleted from the work queue).
	const total = 40
	jobs := make([]*job.Job, total)
	for i := range jobs {
		jobs[i] = submitOne(t, first, fmt.Sprintf("https://restart%d.example/", i))
	}
	s, err := env.JS.Stream(context.Background(), bus.JobsStream)
	if err != nil {
		t.Fatal(err)
	}
	taken := map[int]bool{0: true, 7: true, 20: true, total - 1: true}
	for i := range taken {
		// A work queue's sequences are 1.. in the order of the accepts.
		if err := s.DeleteMsg(context.Background(), uint64(i+1)); err != nil {
			t.Fatal(err)
		}
	}
	stopFirst()

	// Ingest restarted: a fresh process on a fresh connection.
	_, js2 := env.Connect(t, "restarted")
	restarted, _ := runIntake(t, js2)
	// The scan reads JOBS in order of sequence: once the last waiting job
	// is known, every earlier one is too.
	eventually(t, "GET after a restart", isQueued(restarted, jobs[total-2]))
	for i, j := range jobs {
		if taken[i] {
			if _, err := restarted.Get(context.Background(), job.Scan, j.ID); !errors.Is(err, jobstore.ErrNotFound) {
				t.Fatalf("job %d, taken from JOBS without a status: %v", i, err)
			}
			continue
		}
		if err := isQueued(restarted, j)(); err != nil {
			t.Fatalf("job %d: %v", i, err)
		}
	}
	again, _, err := restarted.Submit(context.Background(), []job.Request{scan("https://restart3.example/")})
	if err != nil {
		t.Fatal(err)
	}
	if !again[0].Deduplicated || again[0].ID != jobs[3].ID {
		t.Fatalf("repeat after a restart got %+v, want job %s", again[0], jobs[3].ID)
	}
}

func TestIndexIsSeededFromTheStatusBucket(t *testing.T) {
	env := bustest.Start(t, bus.Config{})
	ctx := context.Background()
	store, err := jobstore.Open(ctx, env.JS)
	if err != nil {
		t.Fatal(err)
	}
	// A job a worker finished before this ingest started (gone from JOBS).
	now := time.Now().UTC()
	done := &job.Job{ID: "2c4b8f0e-6a1d-4e3b-8f5a-9b7c6d5e4f3a", Kind: job.Scan, Status: job.Completed,
		URL: "https://seed.example/", Options: []string{"technologies"}, Created: now, Started: &now, Finished: &now}
	if _, err := store.Finish(ctx, done); err != nil {
		t.Fatal(err)
	}
	in := startIntake(t, env)
	key := digest(scan("https://seed.example/").Key())
	eventually(t, "index seeded", func() error {
		if _, ok := in.index.lookup(key, time.Hour, time.Now()); !ok {
			return errors.New("not yet")
		}
		return nil
	})
	outs, _, err := in.Submit(ctx, []job.Request{scan("https://seed.example/")})
	if err != nil {
		t.Fatal(err)
	}
	if !outs[0].Deduplicated || outs[0].ID != done.ID || outs[0].Status != job.Completed {
		t.Fatalf("repeat of a finished job got %+v, want %s", outs[0], done.ID)
	}
}

func TestKnownForgetsStartedJobsAndStaysBounded(t *testing.T) {
	k := newKnown(2)
	now := time.Now()
	a, b, c, d, e := uuid.New(), uuid.New(), uuid.New(), uuid.New(), uuid.New()
	k.announced(a, state{kind: job.Scan, status: job.Running, at: now})
	k.add(a, waitingJob{kind: job.Scan, doc: []byte("{}"), created: now}) // late news of a started job
	if w, s, _ := k.lookup(a); w.doc != nil || s.status != job.Running {
		t.Fatal("a job a worker announced came back")
	}
	k.seed(a, state{kind: job.Scan, status: job.Queued, at: now}) // older than the event
	if _, s, _ := k.lookup(a); s.status != job.Running {
		t.Fatalf("the status bucket's older news replaced the event: %s", s.status)
	}
	k.add(b, waitingJob{kind: job.Scan, doc: []byte("{}"), created: now.Add(-2 * time.Hour)})
	k.add(c, waitingJob{kind: job.Scan, doc: []byte("{}"), created: now})
	k.add(d, waitingJob{kind: job.Scan, doc: []byte("{}"), created: now})
	if _, _, ok := k.lookup(d); ok || k.waitingLen() != 2 {
		t.Fatalf("%d waiting jobs held, bound 2", k.waitingLen())
	}
	// A new status pushes an old one out.
	k.announced(c, state{kind: job.Scan, status: job.Running, at: now})
	k.announced(e, state{kind: job.Scan, status: job.Running, at: now})
	if _, _, ok := k.lookup(e); !ok || len(k.states) != 2 {
		t.Fatalf("%d statuses held, bound 2", len(k.states))
	}
	k.prune(time.Hour, now)
	if _, _, ok := k.lookup(b); ok || k.waitingLen() != 0 {
		t.Fatalf("prune kept an expired job: %d held", k.waitingLen())
	}
	k.prune(time.Hour, now.Add(time.Hour))
	if len(k.states) != 0 {
		t.Fatalf("prune kept %d expired statuses", len(k.states))
	}
}
