package worker

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"

	"github.com/surveyor/surveyor/pkg/bus"
	"github.com/surveyor/surveyor/pkg/bus/bustest"
	"github.com/surveyor/surveyor/pkg/job"
	"github.com/surveyor/surveyor/pkg/jobstore"
	"github.com/surveyor/surveyor/pkg/obs"
)

var quiet = slog.New(slog.DiscardHandler)

// testEnv is a real JetStream server with Surveyor's streams, the job store
// on it and the recorder the middlewares write through.
type testEnv struct {
	*bustest.Env
	store *jobstore.Store
	rec   *recorder
}

func newTestEnv(t *testing.T) *testEnv {
	t.Helper()
	env := bustest.Start(t, bus.Config{})
	store, err := jobstore.Open(context.Background(), env.JS)
	if err != nil {
		t.Fatal(err)
	}
	return &testEnv{Env: env, store: store, rec: &recorder{store: store, nc: env.Conn, log: quiet}}
}

// broken is an environment on the same server whose connection is closed:
// every write through its recorder or JetStream fails, as when NATS is
// unreachable.
func (e *testEnv) broken(t *testing.T) *testEnv {
	t.Helper()
	nc, js := e.Connect(t, "broken")
	store, err := jobstore.Open(context.Background(), js)
	if err != nil {
		t.Fatal(err)
	}
	nc.Close()
	return &testEnv{Env: &bustest.Env{Server: e.Server, Conn: nc, JS: js}, store: store,
		rec: &recorder{store: store, nc: nc, log: quiet}}
}

// newJob is a job as the loop decodes it on its attempt-th delivery.
func newJob(k job.Kind, attempt int) *job.Job {
	return &job.Job{ID: uuid.NewString(), Kind: k, Status: job.Queued, URL: "https://example.test/",
		Created: time.Now().UTC(), Attempts: attempt}
}

// events returns the status documents announced for kind k from now on.
func (e *testEnv) events(t *testing.T, k job.Kind) <-chan *job.Job {
	t.Helper()
	ch := make(chan *job.Job, 64)
	sub, err := e.Conn.Subscribe(bus.EventSubject(k), func(m *nats.Msg) {
		var j job.Job
		if err := j.UnmarshalJSON(m.Data); err != nil {
			t.Errorf("event %s: %v", m.Data, err)
		}
		ch <- &j
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Conn.Flush(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sub.Unsubscribe() })
	return ch
}

// next waits for the next event.
func next(t *testing.T, ch <-chan *job.Job) *job.Job {
	t.Helper()
	select {
	case j := <-ch:
		return j
	case <-time.After(5 * time.Second):
		t.Fatal("no status event")
		return nil
	}
}

// status reads the job's current status document.
func (e *testEnv) status(t *testing.T, id string) *job.Job {
	t.Helper()
	j, err := e.store.Status(context.Background(), id)
	if err != nil {
		t.Fatalf("status of %s: %v", id, err)
	}
	return j
}

// run passes j through mw around h, as the chain would.
func run(ctx context.Context, mw Middleware, j *job.Job, h HandlerFunc) (any, error) {
	return mw(h).Handle(ctx, j, nil)
}

// succeed, fail and mustNotRun are handlers for the middleware under test.
func succeed(result any) HandlerFunc {
	return func(context.Context, *job.Job, Progress) (any, error) { return result, nil }
}

func fail(err error) HandlerFunc {
	return func(context.Context, *job.Job, Progress) (any, error) { return nil, err }
}

func mustNotRun(t *testing.T) HandlerFunc {
	return func(context.Context, *job.Job, Progress) (any, error) {
		t.Error("the handler ran")
		return nil, nil
	}
}

// requeuedAfter is the delay err asks the loop to wait before the job
// comes again, and whether it asks that.
func requeuedAfter(err error) (time.Duration, bool) {
	var r *requeued
	if errors.As(err, &r) {
		return r.delay, true
	}
	return 0, false
}

// metric reads one series, e.g. `surveyor_jobs_total{kind="scan",status="failed"}`,
// from what /metrics would serve; 0 if it is not there yet.
func metric(t *testing.T, series string) float64 {
	v, _ := lookupMetric(t, series)
	return v
}

// exported reports whether /metrics writes the series at all.
func exported(t *testing.T, series string) bool {
	_, ok := lookupMetric(t, series)
	return ok
}

func lookupMetric(t *testing.T, series string) (float64, bool) {
	t.Helper()
	var buf bytes.Buffer
	obs.Default.Write(&buf)
	sc := bufio.NewScanner(&buf)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", sc.Text(), err)
			}
			return f, true
		}
	}
	return 0, false
}
