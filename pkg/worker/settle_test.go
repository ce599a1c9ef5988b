package worker

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/surveyor/surveyor/pkg/bus"
)

func TestSettleAcknowledgesSuccess(t *testing.T) {
	e := newTestEnv(t)
	_, msg := e.pull(t, time.Minute)
	settle(context.Background(), msg, nil, time.Second, quiet)
	stream, err := e.JS.Stream(context.Background(), bus.JobsStream)
	if err != nil {
		t.Fatal(err)
	}
	if info, err := stream.Info(context.Background()); err != nil || info.State.Msgs != 0 {
		t.Fatalf("the acknowledged job is still queued (%v)", err)
	}
}

func TestSettleHandsBackAfterTheChosenDelay(t *testing.T) {
	const delay = time.Second
	cases := map[string]struct {
		err      error
		fallback time.Duration
	}{
		"a decided error":   {requeue(delay, errors.New("not stored")), time.Millisecond},
		"an undecided one":  {errors.New("plain"), delay},
		"a wrapped decided": {fmt.Errorf("context: %w", requeue(delay, errors.New("x"))), time.Millisecond},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t)
			cons, msg := e.pull(t, time.Minute)
			settle(context.Background(), msg, c.err, c.fallback, quiet)
			if _, err := cons.Next(jetstream.FetchMaxWait(delay / 4)); err == nil {
				t.Fatal("delivered again before the delay")
			}
			again, err := cons.Next(jetstream.FetchMaxWait(5 * time.Second))
			if err != nil {
				t.Fatalf("not delivered again: %v", err)
			}
			if meta, _ := again.Metadata(); meta.NumDelivered != 2 {
				t.Fatalf("delivery %d, want 2", meta.NumDelivered)
			}
		})
	}
}

func TestUndecided(t *testing.T) {
	for err, want := range map[error]bool{
		nil:                             false,
		errors.New("handler failure"):   true,
		Permanent(errors.New("final")):  true,
		requeue(0, errors.New("later")): false,
	} {
		if got := undecided(err); got != want {
			t.Errorf("undecided(%v) = %v, want %v", err, got, want)
		}
	}
}
