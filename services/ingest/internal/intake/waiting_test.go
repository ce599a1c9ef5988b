package intake

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/surveyor/surveyor/pkg/bus"
	"github.com/surveyor/surveyor/pkg/bus/bustest"
	"github.com/surveyor/surveyor/pkg/job"
	"github.com/surveyor/surveyor/pkg/jobstore"
	"github.com/surveyor/surveyor/services/ingest/internal/validate"
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
	outs, _, err := in.Submit(context.Background(), []validate.Request{scan(url)})
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
	// A worker records running (nothing competes with it) and announces it.
	store, err := jobstore.Open(ctx, env.JS)
	if err != nil {
		t.Fatal(err)
	}
	running := *j
	now := time.Now().UTC()
	running.Status, running.Started, running.Attempts = job.Running, &now, 1
	if err := store.Put(ctx, &running); err != nil {
		t.Fatal(err)
	}
	announce(t, env, &running)
	eventually(t, "the worker's event removes the waiting job", func() error {
		if _, ok := in.queued.get(j.ID); ok {
			return errors.New("still remembered as waiting")
		}
		return nil
	})
	if got, err := in.Get(ctx, job.Scan, j.ID); err != nil || got.Status != job.Running || got.Attempts != 1 {
		t.Fatalf("GET of the running job: %+v %v", got, err)
	}
	// Finished, then its status expires: RESULTS still answers.
	done := running
	done.Status, done.Finished, done.Result = job.Completed, &now, json.RawMessage(`{"title":"Life"}`)
	if err := store.Finish(ctx, &done); err != nil {
		t.Fatal(err)
	}
	if err := store.KV().Purge(ctx, j.ID); err != nil {
		t.Fatal(err)
	}
	got, err := in.Get(ctx, job.Scan, j.ID)
	if err != nil || got.Status != job.Completed || string(got.Result) != `{"title":"Life"}` {
		t.Fatalf("GET after the status expired: %+v %v", got, err)
	}
	if _, err := in.Get(ctx, job.Scan, "6f1c1a8e-3d55-4d7b-9a53-5d2f1ad0c0de"); !errors.Is(err, jobstore.ErrNotFound) {
		t.Fatalf("GET of an unknown id: %v", err)
	}
}

// announce publishes a worker's status event for j.
func announce(t *testing.T, env *bustest.Env, j *job.Job) {
	t.Helper()
	data, err := json.Marshal(j)
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Conn.Publish(bus.EventSubject(j.Kind), data); err != nil {
		t.Fatal(err)
	}
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
	again, _, err := second.Submit(context.Background(), []validate.Request{scan("https://replica.example/")})
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
	eventually(t, "GET after a restart", isQueued(restarted, jobs[1]))
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
	again, _, err := restarted.Submit(context.Background(), []validate.Request{scan("https://restart3.example/")})
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
	if err := store.Finish(ctx, done); err != nil {
		t.Fatal(err)
	}
	in := startIntake(t, env)
	key := scan("https://seed.example/").Key()
	eventually(t, "index seeded", func() error {
		if _, ok := in.index.lookup(key, time.Hour, time.Now()); !ok {
			return errors.New("not yet")
		}
		return nil
	})
	outs, _, err := in.Submit(ctx, []validate.Request{scan("https://seed.example/")})
	if err != nil {
		t.Fatal(err)
	}
	if !outs[0].Deduplicated || outs[0].ID != done.ID || outs[0].Status != job.Completed {
		t.Fatalf("repeat of a finished job got %+v, want %s", outs[0], done.ID)
	}
}

func TestQueuedForgetsStartedJobsAndStaysBounded(t *testing.T) {
	q := newQueued(2)
	now := time.Now()
	q.started("a", now)
	q.add("a", queuedJob{kind: job.Scan, created: now}) // late news of a started job
	if _, ok := q.get("a"); ok {
		t.Fatal("a job a worker announced came back")
	}
	q.add("b", queuedJob{kind: job.Scan, created: now.Add(-2 * time.Hour)})
	q.add("c", queuedJob{kind: job.Scan, created: now})
	q.add("d", queuedJob{kind: job.Scan, created: now})
	if _, ok := q.get("d"); ok || q.len() != 2 {
		t.Fatalf("%d jobs held, bound 2", q.len())
	}
	q.prune(time.Hour, now)
	if _, ok := q.get("b"); ok || q.len() != 1 {
		t.Fatalf("prune kept an expired job: %d held", q.len())
	}
	q.prune(time.Hour, now.Add(seenTTL))
	q.add("a", queuedJob{kind: job.Scan, created: now})
	if _, ok := q.get("a"); !ok {
		t.Fatal("an announcement outlived seenTTL")
	}
}
