package intake

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/surveyor/surveyor/pkg/bus"
	"github.com/surveyor/surveyor/pkg/bus/bustest"
	"github.com/surveyor/surveyor/pkg/job"
	"github.com/surveyor/surveyor/pkg/jobstore"
)

// startIntake runs an Intake on a real embedded JetStream server, connected
// in-process as ingest is with EMBEDDED_NATS.
func startIntake(t *testing.T, env *bustest.Env) *Intake {
	t.Helper()
	_, js := env.ConnectInProcess(t, "intake")
	in, _ := runIntake(t, js)
	return in
}

// runIntake runs an Intake on js until the test ends or stop is called.
func runIntake(t *testing.T, js jetstream.JetStream) (in *Intake, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	stop = sync.OnceFunc(func() { cancel(); <-done })
	t.Cleanup(stop)
	store, err := jobstore.Open(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	in = New(js, store, Config{CacheTTL: time.Hour, ResultTTL: time.Hour, Log: quiet})
	go func() { defer close(done); in.Run(ctx) }()
	return in, stop
}

func scan(url string) job.Request {
	return job.Request{Kind: job.Scan, URL: url, Options: []string{"technologies"}}
}

// jobsInStream reads every message of JOBS by sequence and returns the
// Nats-Msg-Id of each, checking that it names the document's own id.
func jobsInStream(t *testing.T, env *bustest.Env) []string {
	t.Helper()
	ctx := context.Background()
	s, err := env.JS.Stream(ctx, bus.JobsStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if err != nil {
			t.Fatalf("JOBS seq %d: %v", seq, err)
		}
		var j job.Job
		if err := json.Unmarshal(m.Data, &j); err != nil {
			t.Fatalf("JOBS seq %d: %v", seq, err)
		}
		if id := m.Header.Get(jetstream.MsgIDHeader); id != j.ID || j.Status != job.Queued {
			t.Fatalf("JOBS seq %d: Nats-Msg-Id %q for job %q (%s)", seq, id, j.ID, j.Status)
		}
		ids = append(ids, j.ID)
	}
	return ids
}

func TestConcurrentSubmitsAreStoredExactlyOnce(t *testing.T) {
	env := bustest.Start(t, bus.Config{})
	in := startIntake(t, env)
	const workers, each = 32, 20
	var mu sync.Mutex
	accepted := map[string]bool{}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				// Every third request carries three URLs, one repeated.
				reqs := []job.Request{scan(fmt.Sprintf("https://w%d-i%d.example/", w, i))}
				if i%3 == 0 {
					reqs = append(reqs, scan(fmt.Sprintf("https://w%d-i%d-b.example/", w, i)), reqs[0])
				}
				outs, _, err := in.Submit(context.Background(), reqs)
				if err != nil {
					t.Error(err)
					return
				}
				if len(reqs) == 3 && (outs[2].ID != outs[0].ID || outs[1].ID == outs[0].ID) {
					t.Errorf("repeats inside one request: %+v", outs)
				}
				mu.Lock()
				for _, o := range outs[:min(len(outs), 2)] {
					accepted[o.ID] = true
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	want := workers * (each + (each+2)/3)
	if len(accepted) != want {
		t.Fatalf("%d distinct jobs accepted, want %d", len(accepted), want)
	}
	ids := jobsInStream(t, env)
	if len(ids) != want {
		t.Fatalf("JOBS holds %d messages, want %d", len(ids), want)
	}
	for _, id := range ids {
		if !accepted[id] {
			t.Fatalf("JOBS holds %s, which no request was given", id)
		}
		delete(accepted, id) // a second copy would now fail above
	}
	// JOBS was the only durable write; GET answers from memory.
	if keys, err := in.store.KV().Keys(context.Background()); !errors.Is(err, jetstream.ErrNoKeysFound) {
		t.Fatalf("status bucket holds %d keys (%v), want none", len(keys), err)
	}
	for _, id := range ids[:50] {
		j, err := in.Get(context.Background(), job.Scan, id)
		if err != nil || j.ID != id || j.Status != job.Queued {
			t.Fatalf("GET %s: %+v %v", id, j, err)
		}
	}
}

func TestFullQueueFailsOnlyTheJobsThatDoNotFit(t *testing.T) {
	const room = 10
	env := bustest.Start(t, bus.Config{JobsMaxMsgs: room})
	in := startIntake(t, env)
	const total = 40
	var wg sync.WaitGroup
	var mu sync.Mutex
	var ok []string
	full := 0
	for i := range total {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs, _, err := in.Submit(context.Background(), []job.Request{scan(fmt.Sprintf("https://full%d.example/", i))})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok = append(ok, outs[0].ID)
			case errors.Is(err, ErrQueueFull):
				full++
			default:
				t.Errorf("submit %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	if len(ok) != room || full != total-room {
		t.Fatalf("%d accepted and %d refused as full, want %d and %d", len(ok), full, room, total-room)
	}
	ids := jobsInStream(t, env)
	if fmt.Sprint(sorted(ids)) != fmt.Sprint(sorted(ok)) {
		t.Fatalf("JOBS holds %v, accepted %v", ids, ok)
	}
	// A refused job leaves no trace: nothing in the status bucket, and
	// only the accepted jobs are remembered as waiting.
	if keys, err := in.store.KV().Keys(context.Background()); !errors.Is(err, jetstream.ErrNoKeysFound) {
		t.Fatalf("status bucket holds %d keys (%v), want none", len(keys), err)
	}
	if n := in.known.waitingLen(); n != room {
		t.Fatalf("%d jobs remembered as waiting, want %d", n, room)
	}
	// A repeat of a refused request is not deduplicated to a job that
	// does not exist, and a repeat of an accepted one is.
	outs, _, err := in.Submit(context.Background(), []job.Request{scan("https://full0.example/")})
	if err == nil && !outs[0].Deduplicated {
		t.Fatalf("a new job fit into a full queue: %+v", outs)
	}
}

func sorted(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return c
}

// Once Run has ended, a request fails at once instead of waiting for a
// batch that will never be sent.
func TestSubmitAfterRunEndsFails(t *testing.T) {
	env := bustest.Start(t, bus.Config{})
	_, js := env.ConnectInProcess(t, "intake")
	in, stop := runIntake(t, js)
	if _, _, err := in.Submit(context.Background(), []job.Request{scan("https://before.example/")}); err != nil {
		t.Fatal(err)
	}
	stop()
	start := time.Now()
	_, _, err := in.Submit(context.Background(), []job.Request{scan("https://after.example/")})
	if !errors.Is(err, ErrUnavailable) || time.Since(start) > time.Second {
		t.Fatalf("submit after Run ended: %v after %s", err, time.Since(start))
	}
	if ids := jobsInStream(t, env); len(ids) != 1 {
		t.Fatalf("JOBS holds %d jobs, want the one accepted", len(ids))
	}
}

// A request whose batch is never answered gives up after the timeout.
func TestSubmissionWithoutAnswerGivesUp(t *testing.T) {
	const timeout = 100 * time.Millisecond
	b := newBatcher(nil, "replica", timeout, func(err error) error { return err })
	stop := make(chan struct{})
	defer close(stop)
	go b.ticking(stop) // the clock of run, without run: nothing is answered
	start := time.Now()
	err := b.store(context.Background(), []bus.Msg{{Subject: "jobs.scan", ID: "1", Data: []byte("{}")}})
	if waited := time.Since(start); !errors.Is(err, ErrUnavailable) || waited < timeout || waited > 3*timeout {
		t.Fatalf("%v after %s, want ErrUnavailable after %s", err, waited, timeout)
	}
}
