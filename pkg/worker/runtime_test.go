package worker_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/surveyor/surveyor/pkg/bus"
	"github.com/surveyor/surveyor/pkg/bus/bustest"
	"github.com/surveyor/surveyor/pkg/job"
	"github.com/surveyor/surveyor/pkg/jobstore"
	"github.com/surveyor/surveyor/pkg/worker"
)

type harness struct {
	t     *testing.T
	env   *bustest.Env
	store *jobstore.Store
}

func newHarness(t *testing.T) *harness {
	env := bustest.Start(t, bus.Config{})
	store, err := jobstore.Open(context.Background(), env.JS)
	if err != nil {
		t.Fatal(err)
	}
	return &harness{t: t, env: env, store: store}
}

// submit queues a job the way ingest does.
func (h *harness) submit(k job.Kind, target string) string {
	h.t.Helper()
	j := &job.Job{ID: uuid.NewString(), Kind: k, Status: job.Queued, URL: target, Created: time.Now().UTC()}
	if k == job.Email {
		j.URL, j.Email = "", target
	}
	data, _ := json.Marshal(j)
	if _, err := h.store.Put(context.Background(), j); err != nil {
		h.t.Fatal(err)
	}
	if _, err := h.env.JS.Publish(context.Background(), bus.JobSubject(k), data, jetstream.WithMsgID(j.ID)); err != nil {
		h.t.Fatal(err)
	}
	return j.ID
}

// run starts a runtime and stops it at the end of the test.
func (h *harness) run(cfg worker.Config, hd worker.Handler) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := worker.New(h.env.JS, h.store, cfg, hd).Run(ctx); err != nil {
			h.t.Error(err)
		}
	}()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	h.t.Cleanup(stop)
	return stop
}

// wait polls the status until the job has finished.
func (h *harness) wait(id string) *job.Job {
	h.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if j, err := h.store.Get(context.Background(), id); err == nil && j.Status.Finished() {
			return j
		}
		time.Sleep(20 * time.Millisecond)
	}
	h.t.Fatalf("job %s did not finish", id)
	return nil
}

func fastRetries(kind job.Kind, maxDeliver int) worker.Config {
	return worker.Config{Kind: kind, Concurrency: 2, MaxDeliver: maxDeliver, AckWait: 2 * time.Second,
		Backoff: func(int) time.Duration { return 50 * time.Millisecond }, Grace: time.Second}
}

func TestCompletesAndPublishesOnce(t *testing.T) {
	h := newHarness(t)
	var seen sync.Map
	var results atomic.Int32
	sub, err := h.env.Conn.Subscribe("results.>", func(m *nats.Msg) {
		results.Add(1)
		if _, dup := seen.LoadOrStore(m.Subject, true); dup {
			t.Errorf("result for %s seen twice", m.Subject)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	h.run(fastRetries(job.Scan, 3), worker.HandlerFunc(func(ctx context.Context, j *job.Job, p worker.Progress) (any, error) {
		return map[string]string{"echo": j.URL}, nil
	}))
	ids := []string{h.submit(job.Scan, "https://a.example/"), h.submit(job.Scan, "https://b.example/")}
	for i, id := range ids {
		j := h.wait(id)
		if j.Status != job.Completed || j.Attempts != 1 || j.Started == nil || j.Finished == nil {
			t.Fatalf("job %d: %+v", i, j)
		}
		var res map[string]string
		json.Unmarshal(j.Result, &res)
		if res["echo"] != j.URL {
			t.Fatalf("result %s does not echo %s", j.Result, j.URL)
		}
	}
	time.Sleep(200 * time.Millisecond)
	if n := results.Load(); n != 2 {
		t.Fatalf("subscriber saw %d results, want 2", n)
	}
}

func TestRetriesThenSucceeds(t *testing.T) {
	h := newHarness(t)
	var calls atomic.Int32
	h.run(fastRetries(job.Email, 5), worker.HandlerFunc(func(ctx context.Context, j *job.Job, p worker.Progress) (any, error) {
		if calls.Add(1) <= 2 {
			return nil, errors.New("transient trouble")
		}
		return map[string]bool{"ok": true}, nil
	}))
	j := h.wait(h.submit(job.Email, "a@example.com"))
	if j.Status != job.Completed || j.Attempts != 3 || calls.Load() != 3 {
		t.Fatalf("status %s attempts %d calls %d", j.Status, j.Attempts, calls.Load())
	}
}

func TestPanicsEndInDeadLetterAndWorkerLivesOn(t *testing.T) {
	h := newHarness(t)
	var calls atomic.Int32
	h.run(fastRetries(job.Sitemap, 3), worker.HandlerFunc(func(ctx context.Context, j *job.Job, p worker.Progress) (any, error) {
		if j.URL == "https://boom.example/" {
			calls.Add(1)
			panic("boom")
		}
		return "fine", nil
	}))
	bad := h.wait(h.submit(job.Sitemap, "https://boom.example/"))
	if bad.Status != job.Failed || bad.Attempts != 3 || calls.Load() != 3 || bad.Error == "" {
		t.Fatalf("bad job: status %s attempts %d calls %d error %q", bad.Status, bad.Attempts, calls.Load(), bad.Error)
	}
	stream, err := h.env.JS.Stream(context.Background(), bus.DeadLetterStream)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := stream.GetLastMsgForSubject(context.Background(), bus.DeadLetterSubject(job.Sitemap))
	if err != nil {
		t.Fatalf("no dead letter: %v", err)
	}
	var dead job.Job
	if err := json.Unmarshal(msg.Data, &dead); err != nil || dead.ID != bad.ID || dead.Error == "" {
		t.Fatalf("dead letter %s: %v", msg.Data, err)
	}
	good := h.wait(h.submit(job.Sitemap, "https://fine.example/"))
	if good.Status != job.Completed {
		t.Fatalf("worker did not live on: %+v", good)
	}
}

func TestPermanentErrorFailsAtOnce(t *testing.T) {
	h := newHarness(t)
	var calls atomic.Int32
	h.run(fastRetries(job.Scan, 5), worker.HandlerFunc(func(ctx context.Context, j *job.Job, p worker.Progress) (any, error) {
		calls.Add(1)
		return nil, worker.Permanent(errors.New("refused target"))
	}))
	j := h.wait(h.submit(job.Scan, "https://x.example/"))
	if j.Status != job.Failed || j.Error != "refused target" || calls.Load() != 1 {
		t.Fatalf("%+v calls %d", j, calls.Load())
	}
}

func TestRedeliveryOfFinishedJobIsOnlyAcked(t *testing.T) {
	h := newHarness(t)
	var calls atomic.Int32
	id := h.submit(job.Scan, "https://x.example/")
	// A worker took the job, stored its result and died before acking: the
	// status says completed and the job is delivered again.
	cons, err := h.env.JS.CreateOrUpdateConsumer(context.Background(), bus.JobsStream, jetstream.ConsumerConfig{
		Durable: bus.ConsumerName(job.Scan), FilterSubject: bus.JobSubject(job.Scan),
		AckPolicy: jetstream.AckExplicitPolicy, AckWait: 300 * time.Millisecond, MaxDeliver: -1,
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cons.Next(jetstream.FetchMaxWait(2 * time.Second)); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	done := &job.Job{ID: id, Kind: job.Scan, Status: job.Completed, URL: "https://x.example/", Created: now, Finished: &now}
	if _, err := h.store.Put(context.Background(), done); err != nil {
		t.Fatal(err)
	}
	h.run(fastRetries(job.Scan, 3), worker.HandlerFunc(func(ctx context.Context, j *job.Job, p worker.Progress) (any, error) {
		calls.Add(1)
		return "again", nil
	}))
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		s, _ := h.env.JS.Stream(context.Background(), bus.JobsStream)
		if info, err := s.Info(context.Background()); err == nil && info.State.Msgs == 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if calls.Load() != 0 {
		t.Fatalf("handler ran %d times for a finished job", calls.Load())
	}
	s, _ := h.env.JS.Stream(context.Background(), bus.JobsStream)
	if info, _ := s.Info(context.Background()); info.State.Msgs != 0 {
		t.Fatal("the redelivered job was never acknowledged")
	}
}

func TestHeartbeatKeepsLongJobFromRedelivery(t *testing.T) {
	h := newHarness(t)
	var calls atomic.Int32
	cfg := fastRetries(job.Sitemap, 5)
	cfg.AckWait = 600 * time.Millisecond
	h.run(cfg, worker.HandlerFunc(func(ctx context.Context, j *job.Job, p worker.Progress) (any, error) {
		calls.Add(1)
		for i := range 5 {
			p.Report(map[string]int{"pages_fetched": i})
			time.Sleep(400 * time.Millisecond)
		}
		return "slow but done", nil
	}))
	id := h.submit(job.Sitemap, "https://slow.example/")
	var sawProgress bool
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) && !sawProgress {
		if j, err := h.store.Status(context.Background(), id); err == nil && j.Status == job.Running && len(j.Progress) > 0 {
			sawProgress = true
		}
		time.Sleep(50 * time.Millisecond)
	}
	j := h.wait(id)
	if !sawProgress {
		t.Error("progress was never visible while running")
	}
	if j.Status != job.Completed || calls.Load() != 1 || j.Attempts != 1 {
		t.Fatalf("status %s calls %d attempts %d: a 2 s job with a 0.6 s AckWait was redelivered", j.Status, calls.Load(), j.Attempts)
	}
}

func TestShutdownReturnsInFlightJob(t *testing.T) {
	h := newHarness(t)
	started := make(chan struct{}, 1)
	cfg := fastRetries(job.Scan, 5)
	cfg.Grace = 200 * time.Millisecond
	stop := h.run(cfg, worker.HandlerFunc(func(ctx context.Context, j *job.Job, p worker.Progress) (any, error) {
		started <- struct{}{}
		<-ctx.Done()
		return nil, ctx.Err()
	}))
	id := h.submit(job.Scan, "https://stuck.example/")
	<-started
	stop()
	if j, _ := h.store.Status(context.Background(), id); j.Status != job.Queued {
		t.Fatalf("after shutdown the job is %s, want queued", j.Status)
	}
	h.run(fastRetries(job.Scan, 5), worker.HandlerFunc(func(ctx context.Context, j *job.Job, p worker.Progress) (any, error) {
		return "finished by the next worker", nil
	}))
	if j := h.wait(id); j.Status != job.Completed {
		t.Fatalf("%+v", j)
	}
}

func TestUndecodableJobIsDropped(t *testing.T) {
	h := newHarness(t)
	var calls atomic.Int32
	h.run(fastRetries(job.Scan, 3), worker.HandlerFunc(func(ctx context.Context, j *job.Job, p worker.Progress) (any, error) {
		calls.Add(1)
		return "ran", nil
	}))
	ctx := context.Background()
	wrongKind, _ := json.Marshal(&job.Job{ID: uuid.NewString(), Kind: job.Email, Email: "a@example.com"})
	for _, data := range [][]byte{[]byte("not json"), []byte(`{"kind":"scan"}`), wrongKind} {
		if _, err := h.env.JS.Publish(ctx, bus.JobSubject(job.Scan), data); err != nil {
			t.Fatal(err)
		}
	}
	good := h.wait(h.submit(job.Scan, "https://after.example/"))
	if good.Status != job.Completed || calls.Load() != 1 {
		t.Fatalf("status %s, handler ran %d times; want only the good job run", good.Status, calls.Load())
	}
	s, _ := h.env.JS.Stream(ctx, bus.JobsStream)
	deadline := time.Now().Add(5 * time.Second)
	for {
		info, err := s.Info(ctx)
		if err == nil && info.State.Msgs == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("undecodable jobs still queued: %+v (%v)", info.State, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
