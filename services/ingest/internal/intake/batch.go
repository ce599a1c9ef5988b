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
	"github.com/surveyor/surveyor/pkg/jobstore"
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
// stored before it, so exactly the jobs after it fail.
//
// A batch holds whatever was queued when the previous one was sent; it
// never waits to fill up, so a lone request goes alone and a busy server
// sends few, large batches. Each batch first stores the queued status
// documents in the status bucket's stream, then the jobs in JOBS: no worker
// can take a job before its status exists, so a worker's "running" is
// never overwritten by "queued". Status documents of jobs that JOBS then
// refused are purged, so nothing points at jobs that do not exist.
//
// (Atomic batches were measured first: with file storage on one server the
// server stages every atomic batch in a file store of its own, created and
// fsynced per batch, which made each job cost ten times more CPU.)
type batcher struct {
	nc       *nats.Conn
	kv       jetstream.KeyValue
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

func newBatcher(nc *nats.Conn, kv jetstream.KeyValue, timeout time.Duration, classify func(error) error) *batcher {
	return &batcher{
		nc:       nc,
		kv:       kv,
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

// run forms and sends batches until ctx ends. One batch per stream is in
// flight at a time: the server paces a batch's acknowledgements best when
// it is the only one, and the next batch gathers meanwhile.
func (b *batcher) run(ctx context.Context) error {
	sub, err := b.nc.Subscribe(b.inbox+".>", b.reply)
	if err != nil {
		return err
	}
	defer sub.Unsubscribe()
	// Status and JOBS batches overlap: while batch k's jobs go to JOBS,
	// batch k+1's status documents go to the bucket.
	// At the end, batches already past their status finish before the
	// replies stop being read.
	toJobs, jobsDone := make(chan []*submission, 1), make(chan struct{})
	go func() {
		defer close(jobsDone)
		for batch := range toJobs {
			b.storeJobs(batch)
		}
	}()
	defer func() { close(toJobs); <-jobsDone }()
	var carry *submission
	for {
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
		if stored := b.storeStatus(batch); len(stored) > 0 {
			toJobs <- stored
		}
	}
}

// storeStatus writes the batch's queued status documents, answers the
// submissions whose documents were refused, and returns the others.
func (b *batcher) storeStatus(batch []*submission) []*submission {
	count, err := b.send(batch, func(j newJob) *nats.Msg {
		return &nats.Msg{Subject: jobstore.StatusSubject(j.id), Data: j.data}
	})
	stored, refused := b.settle(batch, count, err)
	if len(refused) > 0 {
		go b.purge(refused)
	}
	return stored
}

// storeJobs publishes the batch's jobs to JOBS and answers every submission.
func (b *batcher) storeJobs(batch []*submission) {
	count, err := b.send(batch, func(j newJob) *nats.Msg {
		return &nats.Msg{Subject: job.JobSubject(j.kind), Data: j.data,
			Header: nats.Header{jetstream.MsgIDHeader: {j.id}}}
	})
	stored, refused := b.settle(batch, count, err)
	for _, s := range stored {
		s.done <- nil
	}
	if len(refused) > 0 {
		go b.purge(refused)
	}
}

// settle splits a batch at the count of messages stored: submissions wholly
// inside it are returned as stored; the others are answered with the error
// and returned as refused.
func (b *batcher) settle(batch []*submission, count int, err error) (stored, refused []*submission) {
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
		refused = append(refused, s)
	}
	return stored, refused
}

// send publishes one message per job as one batch and waits for the
// acknowledgement. It returns how many messages, from the first, the
// stream stored, and why the rest were not.
func (b *batcher) send(batch []*submission, msg func(newJob) *nats.Msg) (int, error) {
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
			m := msg(j)
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

// purge removes the status documents of refused submissions (some may have
// been stored before the refusal). It is best effort: a document it misses
// describes a job nobody was told about.
func (b *batcher) purge(refused []*submission) {
	ctx, cancel := context.WithTimeout(context.Background(), b.timeout)
	defer cancel()
	for _, s := range refused {
		for _, j := range s.jobs {
			if err := b.kv.Purge(ctx, j.id); err != nil {
				return
			}
		}
	}
}
