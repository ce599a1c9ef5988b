package bus_test

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/surveyor/surveyor/pkg/bus"
	"github.com/surveyor/surveyor/pkg/bus/bustest"
	"github.com/surveyor/surveyor/pkg/job"
)

// The subjects of contract §5, which other systems rely on.
func TestSubjectsFollowTheContract(t *testing.T) {
	for _, k := range job.Kinds {
		got := []string{bus.JobSubject(k), bus.ResultSubject(k, "42"), bus.DeadLetterSubject(k)}
		want := []string{"jobs." + string(k), "results." + string(k) + ".42", "deadletter." + string(k)}
		if !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", k, got, want)
		}
	}
}

// An announcement larger than one message is split, and every document
// arrives once, in order, with the replica's name.
func TestAnnouncementsCarryEveryDocument(t *testing.T) {
	env := bustest.Start(t, bus.Config{})
	sub, err := env.Conn.SubscribeSync(bus.AcceptedSubject)
	if err != nil {
		t.Fatal(err)
	}
	env.Conn.Flush()
	pad := bytes.Repeat([]byte("x"), 1000)
	var sent [][]byte
	var msgs []bus.Msg
	for i := range 3 * bus.MaxPayload / len(pad) {
		sent = append(sent, fmt.Appendf(nil, `{"n":%d,"pad":"%s"}`, i, pad))
		msgs = append(msgs, bus.Msg{Data: sent[i]})
	}
	bus.Announce(env.Conn, "replica-1", msgs)
	var got [][]byte
	for len(got) < len(sent) {
		m, err := sub.NextMsg(5 * time.Second)
		if err != nil {
			t.Fatalf("after %d documents: %v", len(got), err)
		}
		replica, docs := bus.Accepted(m)
		if replica != "replica-1" {
			t.Fatalf("announced by %q", replica)
		}
		got = slices.AppendSeq(got, docs)
	}
	if !slices.EqualFunc(got, sent, bytes.Equal) {
		t.Fatal("the documents arrived changed")
	}
	if _, err := sub.NextMsg(100 * time.Millisecond); err != nats.ErrTimeout {
		t.Fatalf("an extra announcement: %v", err)
	}
}
