package bus_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/surveyor/surveyor/pkg/bus"
	"github.com/surveyor/surveyor/pkg/bus/bustest"
	"github.com/surveyor/surveyor/pkg/job"
)

func newPublisher(t *testing.T, env *bustest.Env) *bus.BatchPublisher {
	t.Helper()
	nc, _ := env.ConnectInProcess(t, "publisher")
	p, err := bus.NewBatchPublisher(nc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// batch makes n messages for JOBS, with ids prefix-0, prefix-1, ...
func batch(prefix string, n int) []bus.Msg {
	msgs := make([]bus.Msg, n)
	for i := range msgs {
		id := fmt.Sprintf("%s-%d", prefix, i)
		msgs[i] = bus.Msg{Subject: bus.JobSubject(job.Kinds[i%len(job.Kinds)]), ID: id, Data: []byte(`{"n":"` + id + `"}`)}
	}
	return msgs
}

// stored reads JOBS in order and returns each message's Nats-Msg-Id,
// checking that it is stored under the subject and with the data it was
// sent with.
func stored(t *testing.T, env *bustest.Env) []string {
	t.Helper()
	var ids []string
	err := bus.ScanStream(context.Background(), env.JS, bus.JobsStream, 5*time.Second, func(m *nats.Msg) {
		id := m.Header.Get(jetstream.MsgIDHeader)
		if string(m.Data) != `{"n":"`+id+`"}` {
			t.Errorf("message %s holds %s", id, m.Data)
		}
		ids = append(ids, id)
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

func ids(msgs []bus.Msg) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.ID
	}
	return out
}

func TestBatchIsStoredInOrderWithOneAcknowledgement(t *testing.T) {
	env := bustest.Start(t, bus.Config{})
	p := newPublisher(t, env)
	ctx := context.Background()
	var want []string
	for _, n := range []int{1, 2, 37, bus.MaxBatch} {
		msgs := batch(fmt.Sprint("b", n), n)
		count, err := p.Publish(ctx, msgs)
		if err != nil || count != n {
			t.Fatalf("batch of %d: %d stored, %v", n, count, err)
		}
		want = append(want, ids(msgs)...)
	}
	if got := stored(t, env); !slices.Equal(got, want) {
		t.Fatalf("JOBS holds %d messages, want the %d sent in order", len(got), len(want))
	}
	if _, err := p.Publish(ctx, batch("big", bus.MaxBatch+1)); err == nil {
		t.Fatal("a batch over MaxBatch was sent")
	}
}

func TestBatchIntoAFullStreamStoresWhatFits(t *testing.T) {
	const room = 10
	env := bustest.Start(t, bus.Config{JobsMaxMsgs: room})
	p := newPublisher(t, env)
	ctx := context.Background()
	first := batch("first", 4)
	if count, err := p.Publish(ctx, first); err != nil || count != 4 {
		t.Fatalf("first batch: %d stored, %v", count, err)
	}
	second := batch("second", 9)
	count, err := p.Publish(ctx, second)
	if count != room-4 || !bus.IsQueueFull(err) {
		t.Fatalf("second batch: %d stored (want %d), err %v (want the queue full)", count, room-4, err)
	}
	want := append(ids(first), ids(second)[:count]...)
	if got := stored(t, env); !slices.Equal(got, want) {
		t.Fatalf("JOBS holds %v, want %v", got, want)
	}
}

// The server tells batches apart by their id alone: two publishers (two
// ingest replicas) sending at once must not mix their batches.
func TestConcurrentPublishersKeepTheirBatchesApart(t *testing.T) {
	env := bustest.Start(t, bus.Config{})
	pubs := []*bus.BatchPublisher{newPublisher(t, env), newPublisher(t, env)}
	const rounds, size = 30, 20
	var wg sync.WaitGroup
	var mu sync.Mutex
	var want []string
	for i, p := range pubs {
		for g := range 2 { // two batches in flight per publisher
			wg.Add(1)
			go func() {
				defer wg.Done()
				for r := range rounds {
					msgs := batch(fmt.Sprintf("p%d-g%d-r%d", i, g, r), size)
					count, err := p.Publish(context.Background(), msgs)
					if err != nil || count != size {
						t.Errorf("publisher %d: %d of %d stored: %v", i, count, size, err)
						return
					}
					mu.Lock()
					want = append(want, ids(msgs)...)
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	got := stored(t, env)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("JOBS holds %d messages, %d were acknowledged", len(got), len(want))
	}
}

func TestBatchWithoutAnAcknowledgementFailsAtTheDeadline(t *testing.T) {
	env := bustest.Start(t, bus.Config{})
	nc, _ := env.ConnectInProcess(t, "publisher")
	p, err := bus.NewBatchPublisher(nc)
	if err != nil {
		t.Fatal(err)
	}
	p.Close() // no replies are read any more
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	count, err := p.Publish(ctx, batch("lost", 3))
	if count != 0 || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("%d stored, %v; want 0 and the deadline", count, err)
	}
}
