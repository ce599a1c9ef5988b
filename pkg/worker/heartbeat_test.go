package worker

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/surveyor/surveyor/pkg/bus"
	"github.com/surveyor/surveyor/pkg/job"
)

// pull publishes one job and takes it from a consumer with the given
// AckWait, as a worker would.
func (e *testEnv) pull(t *testing.T, ackWait time.Duration) (jetstream.Consumer, jetstream.Msg) {
	t.Helper()
	ctx := context.Background()
	cons, err := e.JS.CreateOrUpdateConsumer(ctx, bus.JobsStream, jetstream.ConsumerConfig{
		Durable: bus.ConsumerName(job.Scan), FilterSubject: bus.JobSubject(job.Scan),
		AckPolicy: jetstream.AckExplicitPolicy, AckWait: ackWait, MaxDeliver: -1,
	})
	if err != nil {
		t.Fatal(err)
	}
	j := newJob(job.Scan, 0)
	if _, err := e.JS.Publish(ctx, bus.JobSubject(job.Scan), j.AppendJSON(nil), jetstream.WithMsgID(j.ID)); err != nil {
		t.Fatal(err)
	}
	msg, err := cons.Next(jetstream.FetchMaxWait(5 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	return cons, msg
}

func TestKeepAliveHoldsTheJobUntilStopped(t *testing.T) {
	e := newTestEnv(t)
	const ackWait = 600 * time.Millisecond
	cons, msg := e.pull(t, ackWait)
	stop := keepAlive(msg, ackWait/3)
	// Three times AckWait without an ack: kept alive, it is not redelivered.
	if again, err := cons.Next(jetstream.FetchMaxWait(3 * ackWait)); err == nil {
		meta, _ := again.Metadata()
		t.Fatalf("redelivered while kept alive (delivery %d)", meta.NumDelivered)
	}
	stop()
	again, err := cons.Next(jetstream.FetchMaxWait(5 * time.Second))
	if err != nil {
		t.Fatalf("not redelivered once the heartbeat stopped: %v", err)
	}
	if meta, _ := again.Metadata(); meta.NumDelivered != 2 {
		t.Fatalf("delivery %d, want 2", meta.NumDelivered)
	}
}
