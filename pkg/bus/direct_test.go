package bus_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/surveyor/surveyor/pkg/bus"
	"github.com/surveyor/surveyor/pkg/bus/bustest"
)

// A work queue read by sequence: more messages than one direct get answers,
// with gaps where consumers took some.
func TestScanStreamReadsEveryMessageLeft(t *testing.T) {
	env := bustest.Start(t, bus.Config{})
	ctx := context.Background()
	if err := bus.ScanStream(ctx, env.JS, bus.JobsStream, time.Second, func(*nats.Msg) { t.Error("a message in an empty stream") }); err != nil {
		t.Fatal(err)
	}
	p := newPublisher(t, env)
	const total = 600
	msgs := batch("scan", total)
	for i := 0; i < total; i += 100 {
		if _, err := p.Publish(ctx, msgs[i:i+100]); err != nil {
			t.Fatal(err)
		}
	}
	s, err := env.JS.Stream(ctx, bus.JobsStream)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	taken := map[int]bool{0: true, 7: true, 255: true, 256: true, 257: true, 511: true, total - 1: true}
	for i, m := range msgs {
		if !taken[i] {
			want = append(want, m.ID)
			continue
		}
		if err := s.DeleteMsg(ctx, uint64(i+1)); err != nil {
			t.Fatal(err)
		}
	}
	if got := stored(t, env); !slices.Equal(got, want) {
		t.Fatalf("scan read %d messages, want %d in order", len(got), len(want))
	}
}
