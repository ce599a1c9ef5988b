package intake

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/surveyor/surveyor/pkg/job"
)

// maxBatch bounds the jobs of one batch (a /v1/scans request may bring
// 1000 at once; it is never split).
const maxBatch = 1000

// newJob is one job to store: its id, kind and encoded document.
type newJob struct {
	id   string
	kind job.Kind
	data []byte
}

// submission is the new jobs of one Submit, waiting for their batch.
type submission struct {
	jobs []newJob
	done chan error // receives exactly once
}

// batcher stores the jobs of concurrent Submits together, with JetStream's
// batch publishing (nats-server 2.12+, AllowBatchPublish on the stream):
// the messages of a batch go out without waiting, and the server answers
// the whole batch with one acknowledgement once every message is stored,
// instead of one per message. In "gap: fail" mode a refused message (a
// full queue) ends the batch: the acknowledgement counts the messages
// stored before it, so exactly the jobs after it fail, and a refused job
// leaves nothing behind. JOBS is the only durable write of a new job.
//
// A batch holds whatever was queued when a slot to send it opened; it
// never waits to fill up, so a lone request goes alone and a busy server
// sends few, large batches. Once stored, a batch's jobs are announced on
// AcceptedSubject for the other ingest replicas.
//
// (Atomic batches were measured first: with file storage on one server the
// server stages every atomic batch in a file store of its own, created and
// fsynced per batch, which made each job cost ten times more CPU.)
type batcher struct {
	nc       *nats.Conn
	replica  string // this ingest's id in its announcements
	timeout  time.Duration
	classify func(error) error // turns a publish error into Submit's error
	queue    chan *submission
	inbox    string
	seq      atomic.Uint64

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

func newBatcher(nc *nats.Conn, replica string, timeout time.Duration, classify func(error) error) *batcher {
	return &batcher{
		nc:       nc,
		replica:  replica,
		timeout:  timeout,
		classify: classify,
		queue:    make(chan *submission, 4*maxBatch),
		inbox:    nats.NewInbox(),
		waiting:  map[string]*inflight{},
	}
}

// store queues the jobs and waits until they are stored, refused, or the
// timeout passes.
func (b *batcher) store(ctx context.Context, jobs []newJob) error {
	s := &submission{jobs: jobs, done: make(chan error, 1)}
	t := time.NewTimer(b.timeout)
	defer t.Stop()
	select {
	case b.queue <- s:
	case <-t.C:
		return fmt.Errorf("%w: intake queue did not move within %s", ErrUnavailable, b.timeout)
	case <-ctx.Done():
		return fmt.Errorf("%w: %v", ErrUnavailable, ctx.Err())
	}
	select {
	case err := <-s.done:
		return err
	case <-t.C:
		return fmt.Errorf("%w: no acknowledgement within %s", ErrUnavailable, b.timeout)
	case <-ctx.Done():
		return fmt.Errorf("%w: %v", ErrUnavailable, ctx.Err())
	}
}

// batchesInFlight bounds the batches sent and not yet acknowledged. With
// JOBS the only write, 1, 2, 4 and 8 measured the same under make bench
// (the tail latency does not come from waiting for a slot); 2 lets the
// next batch go while the server acknowledges one.
const batchesInFlight = 2

// run forms and sends batches until ctx ends, batchesInFlight at a time:
// a batch is formed only when a slot is free, so submissions arriving
// meanwhile join the next one. At the end, batches in flight finish before
// the replies stop being read.
func (b *batcher) run(ctx context.Context) error {
	sub, err := b.nc.Subscribe(b.inbox+".>", b.reply)
	if err != nil {
		return err
	}
	defer sub.Unsubscribe()
	slots := make(chan struct{}, batchesInFlight)
	var sending sync.WaitGroup
	defer sending.Wait()
	var carry *submission
	for {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return nil
		}
		first := carry
		carry = nil
		if first == nil {
			select {
			case first = <-b.queue:
			case <-ctx.Done():
				return nil
			}
		}
		batch, n := []*submission{first}, len(first.jobs)
	gather:
		for n < maxBatch {
			select {
			case s := <-b.queue:
				if n+len(s.jobs) > maxBatch {
					carry = s
					break gather
				}
				batch, n = append(batch, s), n+len(s.jobs)
			default:
				break gather
			}
		}
		sending.Add(1)
		go func() {
			defer func() { <-slots; sending.Done() }()
			b.storeJobs(batch)
		}()
	}
}

// storeJobs publishes the batch's jobs to JOBS, announces the stored ones
// and answers every submission.
func (b *batcher) storeJobs(batch []*submission) {
	count, err := b.send(batch)
	stored := b.settle(batch, count, err)
	b.announce(stored)
	for _, s := range stored {
		s.done <- nil
	}
}

// settle splits a batch at the count of messages stored: submissions wholly
// inside it are returned; the others are answered with the error.
func (b *batcher) settle(batch []*submission, count int, err error) (stored []*submission) {
	if err != nil {
		err = b.classify(err)
	}
	i := 0
	for _, s := range batch {
		i += len(s.jobs)
		if i <= count {
			stored = append(stored, s)
			continue
		}
		if err == nil {
			err = b.classify(errors.New("batch acknowledged fewer messages than sent"))
		}
		s.done <- err
	}
	return stored
}

// send publishes one JOBS message per job as one batch and waits for the
// acknowledgement. It returns how many messages, from the first, the
// stream stored, and why the rest were not.
func (b *batcher) send(batch []*submission) (int, error) {
	n := 0
	for _, s := range batch {
		n += len(s.jobs)
	}
	id := strconv.FormatUint(b.seq.Add(1), 36)
	w := &inflight{done: make(chan batchAck, 1)}
	b.mu.Lock()
	b.waiting[id] = w
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		delete(b.waiting, id)
		b.mu.Unlock()
	}()
	prefix := b.inbox + "." + id + "." + strconv.Itoa(ackEvery) + ".fail."
	seq := 0
	for _, s := range batch {
		for _, j := range s.jobs {
			seq++
			m := &nats.Msg{Subject: job.JobSubject(j.kind), Data: j.data,
				Header: nats.Header{jetstream.MsgIDHeader: {j.id}}}
			m.Reply = replySubject(prefix, seq, n)
			if err := b.nc.PublishMsg(m); err != nil {
				return 0, err // nothing after a failed send is stored
			}
		}
	}
	t := time.NewTimer(b.timeout)
	defer t.Stop()
	select {
	case ack := <-w.done:
		return ack.count, ack.err
	case <-t.C:
		return 0, fmt.Errorf("%w: no batch acknowledgement within %s", ErrUnavailable, b.timeout)
	}
}

// Operations of the batch protocol, the second-last token of the reply
// subject: <inbox>.<batch id>.<flow>.<gap mode>.<sequence>.<operation>.$FI
const (
	opStart  = 0
	opAppend = 1
	opCommit = 2
)

// ackEvery asks the server to confirm progress only every so many
// messages; our batches are acknowledged whole at the commit anyway.
const ackEvery = maxBatch

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
	Batch string              `json:"batch"`
	Count int                 `json:"count"`
}

// reply routes the server's answers to the batches waiting for them.
func (b *batcher) reply(m *nats.Msg) {
	rest := strings.TrimPrefix(m.Subject, b.inbox+".")
	id, _, _ := strings.Cut(rest, ".")
	var r serverReply
	if json.Unmarshal(m.Data, &r) != nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	w, ok := b.waiting[id]
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
		delete(b.waiting, id)
		w.done <- ack
	}
}

// AcceptedSubject is where every ingest replica announces the jobs it
// stored (core NATS, not persisted), so that the others can answer GET for
// them while they wait. One message per batch: the header
// AnnouncerHeader names the replica; the body is the jobs' documents, one
// per line (JSON documents hold no raw newline).
const (
	AcceptedSubject = "surveyor.accepted"
	AnnouncerHeader = "Surveyor-Ingest"
)

// announce tells the other replicas of stored jobs, in messages no larger
// than the connection allows. A lost announcement only leaves a job
// unanswered elsewhere until a worker starts it or that replica restarts.
func (b *batcher) announce(stored []*submission) {
	limit := int(b.nc.MaxPayload()) - 1024 // room for the header
	var body []byte
	flush := func() {
		if len(body) == 0 {
			return
		}
		m := &nats.Msg{Subject: AcceptedSubject, Data: body, Header: nats.Header{AnnouncerHeader: {b.replica}}}
		b.nc.PublishMsg(m) // best effort, see above
		body = nil
	}
	for _, s := range stored {
		for _, j := range s.jobs {
			if len(body) > 0 && len(body)+1+len(j.data) > limit {
				flush()
			}
			if len(body) > 0 {
				body = append(body, '\n')
			}
			body = append(body, j.data...)
		}
	}
	flush()
}
