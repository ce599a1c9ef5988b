package bus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// MaxBatch is the most messages one batch may hold.
const MaxBatch = 1000

// Msg is one message of a batch.
type Msg struct {
	Subject string
	ID      string // its Nats-Msg-Id
	Data    []byte
}

// ErrShortAck means the server acknowledged fewer messages of a batch than
// were sent without saying why the next one was refused.
var ErrShortAck = errors.New("batch acknowledged fewer messages than sent")

// BatchPublisher stores messages with JetStream's fast batch publishing
// (nats-server 2.12+, AllowBatchPublish on the stream): the messages of a
// batch go out without waiting, and the server answers the whole batch with
// one acknowledgement once every message is stored, instead of one per
// message. It uses the "gap: fail" mode: a refused message (a full stream)
// ends the batch, and the acknowledgement counts the messages stored before
// it, so exactly the messages after it are not stored.
//
// (Atomic batches were measured first: with file storage on one server the
// server stages every atomic batch in a file store of its own, created and
// fsynced per batch, which made each message cost ten times more CPU.)
//
// It is safe for concurrent use; batches sent at the same time are
// acknowledged independently.
type BatchPublisher struct {
	nc     *nats.Conn
	inbox  string // replies arrive on inbox.<batch id>.<...>
	idBase string // makes batch ids unique among publishers
	sub    *nats.Subscription
	seq    atomic.Uint64

	mu      sync.Mutex
	waiting map[string]*inflight // by batch id
}

// inflight is a batch waiting for its acknowledgement.
type inflight struct {
	err  error         // the first refusal the server reported
	done chan batchAck // receives the final acknowledgement
}

type batchAck struct {
	count int // messages stored, from the first
	err   error
}

// NewBatchPublisher subscribes to the replies of its batches on nc.
func NewBatchPublisher(nc *nats.Conn) (*BatchPublisher, error) {
	inbox := nc.NewInbox()
	p := &BatchPublisher{
		nc:    nc,
		inbox: inbox,
		// The server tells batches apart by their id alone (per stream,
		// across connections), a token of at most 64 characters: the
		// inbox's unique token (22) and a counter.
		idBase:  inbox[strings.LastIndexByte(inbox, '.')+1:],
		waiting: map[string]*inflight{},
	}
	sub, err := nc.Subscribe(inbox+".>", p.reply)
	if err != nil {
		return nil, err
	}
	p.sub = sub
	return p, nil
}

// Close stops reading replies; batches still waiting time out.
func (p *BatchPublisher) Close() error { return p.sub.Unsubscribe() }

// Publish sends msgs (at most MaxBatch) as one batch and waits for the
// acknowledgement until ctx ends. It returns how many messages, from the
// first, the stream stored, and why the rest were not: the server's
// *jetstream.APIError when it refused one, ErrShortAck, a send error, or
// ctx's error (then nothing is known to be stored, though some may be).
func (p *BatchPublisher) Publish(ctx context.Context, msgs []Msg) (int, error) {
	n := len(msgs)
	if n == 0 {
		return 0, nil
	}
	if n > MaxBatch {
		return 0, fmt.Errorf("batch of %d messages: at most %d", n, MaxBatch)
	}
	id := p.idBase + strconv.FormatUint(p.seq.Add(1), 36)
	w := &inflight{done: make(chan batchAck, 1)}
	p.mu.Lock()
	p.waiting[id] = w
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.waiting, id)
		p.mu.Unlock()
	}()
	// One message and header reused for every message: PublishMsg has
	// encoded them by the time it returns.
	msgID := []string{""}
	m := &nats.Msg{Header: nats.Header{jetstream.MsgIDHeader: msgID}}
	prefix := p.inbox + "." + id + "." + strconv.Itoa(MaxBatch) + ".fail."
	for i, b := range msgs {
		m.Subject, m.Data, msgID[0] = b.Subject, b.Data, b.ID
		m.Reply = replySubject(prefix, i+1, n)
		if err := p.nc.PublishMsg(m); err != nil {
			return 0, err // nothing after a failed send is stored
		}
	}
	select {
	case ack := <-w.done:
		if ack.err == nil && ack.count < n {
			ack.err = ErrShortAck
		}
		return ack.count, ack.err
	case <-ctx.Done():
		return 0, fmt.Errorf("no batch acknowledgement: %w", ctx.Err())
	}
}

// Operations of the batch protocol, the second-last token of the reply
// subject: <inbox>.<batch id>.<flow>.<gap mode>.<sequence>.<operation>.$FI
// The flow, MaxBatch, asks the server to confirm progress only every so
// many messages: a batch is acknowledged whole at its commit anyway.
const (
	opStart  = 0
	opAppend = 1
	opCommit = 2
)

// replySubject completes prefix (<inbox>.<batch id>.<flow>.<gap mode>.)
// for message seq of n.
func replySubject(prefix string, seq, n int) string {
	op := opAppend
	switch {
	case seq == n:
		op = opCommit
	case seq == 1:
		op = opStart
	}
	r := make([]byte, 0, len(prefix)+12)
	r = append(r, prefix...)
	r = strconv.AppendInt(r, int64(seq), 10)
	r = append(r, '.', byte('0'+op), '.', '$', 'F', 'I')
	return string(r)
}

// serverReply is any answer to a batch message: a flow-control "ack", a
// "gap" or "err" report, or (no type) the batch's final PubAck.
type serverReply struct {
	Type  string              `json:"type"`
	Error *jetstream.APIError `json:"error"`
	Count int                 `json:"count"`
}

// reply routes the server's answers to the batches waiting for them.
func (p *BatchPublisher) reply(m *nats.Msg) {
	rest := strings.TrimPrefix(m.Subject, p.inbox+".")
	id, _, _ := strings.Cut(rest, ".")
	var r serverReply
	if json.Unmarshal(m.Data, &r) != nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	w, ok := p.waiting[id]
	if !ok {
		return // a batch already settled: later messages are refused too
	}
	switch r.Type {
	case "ack", "gap":
		// Progress reports; the final PubAck says what was stored.
	case "err":
		if w.err == nil && r.Error != nil {
			w.err = r.Error
		}
	default:
		ack := batchAck{count: r.Count, err: w.err}
		if r.Error != nil {
			ack = batchAck{count: 0, err: r.Error}
		}
		delete(p.waiting, id)
		w.done <- ack
	}
}
