package worker

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/surveyor/surveyor/pkg/bus"
	"github.com/surveyor/surveyor/pkg/job"
)

func TestAnnounceCapacityAndPending(t *testing.T) {
	e := newTestEnv(t)
	beats := make(chan *nats.Msg, 4)
	sub, err := e.Conn.ChanSubscribe(bus.WorkersSubject(job.Email), beats)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cons, err := e.JS.CreateOrUpdateConsumer(ctx, bus.JobsStream, jetstream.ConsumerConfig{
		Durable: bus.ConsumerName(job.Email), FilterSubject: bus.JobSubject(job.Email),
		AckPolicy: jetstream.AckExplicitPolicy,
	})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		j := newJob(job.Email, 0)
		if _, err := e.JS.Publish(ctx, bus.JobSubject(job.Email), j.AppendJSON(nil)); err != nil {
			t.Fatal(err)
		}
	}
	r := New(e.JS, e.store, Config{Kind: job.Email, Concurrency: 7, Log: quiet}, succeed(nil))
	go r.announce(ctx, cons)

	select {
	case m := <-beats:
		var beat struct {
			ID          string   `json:"id"`
			Kind        job.Kind `json:"kind"`
			Concurrency int      `json:"concurrency"`
		}
		if err := json.Unmarshal(m.Data, &beat); err != nil || beat.ID != r.id || beat.Kind != job.Email || beat.Concurrency != 7 {
			t.Fatalf("beat %s (%v)", m.Data, err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no beat")
	}
	deadline := time.Now().Add(5 * time.Second)
	for r.Pending() != 3 {
		if time.Now().After(deadline) {
			t.Fatalf("pending %d, want 3", r.Pending())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
