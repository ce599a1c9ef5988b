package intake

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/surveyor/surveyor/pkg/bus"
)

// submission is the new jobs of one Submit, waiting for their batch.
type submission struct {
	jobs []bus.Msg
	done chan error // receives exactly once
}

// batcher stores the jobs of concurrent Submits together, as one batch of
// bus.BatchPublisher: one acknowledgement for many jobs. JOBS is the only
// durable write of a new job.
//
// A batch holds whatever was queued when a slot to send it opened; it
// never waits to fill up, so a lone request goes alone and a busy server
// sends few, large batches. Once stored, a batch's jobs are announced to
// the other ingest replicas (bus.Announce).
type batcher struct {
	nc       *nats.Conn
	replica  string // this ingest's id in its announcements
	timeout  time.Duration
	classify func(error) error // turns a publish error into Submit's error
	queue    chan *submission

	// closed is set when run ends. Every submission queued before gets its
	// answer: from its batch, whose publish is bounded by the timeout, or
	// from run's final drain.
	mu     sync.RWMutex
	closed bool

	// tick is closed and replaced every quarter of the timeout while run
	// runs: the one clock by which a waiting request gives up, should its
	// batch never be answered (a timer per request cost about a tenth of
	// Submit's CPU).
	tick atomic.Pointer[chan struct{}]
}

func newBatcher(nc *nats.Conn, replica string, timeout time.Duration, classify func(error) error) *batcher {
	b := &batcher{
		nc:       nc,
		replica:  replica,
		timeout:  timeout,
		classify: classify,
		queue:    make(chan *submission, 4*bus.MaxBatch),
	}
	tick := make(chan struct{})
	b.tick.Store(&tick)
	return b
}

// store queues the jobs and waits until they are stored or refused.
func (b *batcher) store(ctx context.Context, jobs []bus.Msg) error {
	s := &submission{jobs: jobs, done: make(chan error, 1)}
	if err := b.enqueue(ctx, s); err != nil {
		return err
	}
	start := time.Now()
	for {
		select {
		case err := <-s.done:
			return err
		case <-ctx.Done():
			return fmt.Errorf("%w: %v", ErrUnavailable, ctx.Err())
		case <-*b.tick.Load():
			if time.Since(start) >= b.timeout {
				return fmt.Errorf("%w: no acknowledgement within %s", ErrUnavailable, b.timeout)
			}
		}
	}
}

// ticking runs tick until stop is closed.
func (b *batcher) ticking(stop <-chan struct{}) {
	t := time.NewTicker(b.timeout / 4)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			next := make(chan struct{})
			close(*b.tick.Swap(&next))
		case <-stop:
			return
		}
	}
}

// enqueue hands s to run. Only a full queue makes it wait, up to the
// timeout.
func (b *batcher) enqueue(ctx context.Context, s *submission) error {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.closed {
		return fmt.Errorf("%w: intake stopped", ErrUnavailable)
	}
	select {
	case b.queue <- s:
		return nil
	default:
	}
	t := time.NewTimer(b.timeout)
	defer t.Stop()
	select {
	case b.queue <- s:
		return nil
	case <-t.C:
		return fmt.Errorf("%w: intake queue did not move within %s", ErrUnavailable, b.timeout)
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
// the replies stop being read, and submissions still queued fail.
func (b *batcher) run(ctx context.Context) error {
	stopTicking := make(chan struct{})
	defer close(stopTicking)
	go b.ticking(stopTicking)
	var carry *submission
	defer func() { b.close(carry) }()
	pub, err := bus.NewBatchPublisher(b.nc)
	if err != nil {
		return err
	}
	defer pub.Close()
	slots := make(chan struct{}, batchesInFlight)
	var sending sync.WaitGroup
	defer sending.Wait()
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
		for n < bus.MaxBatch {
			select {
			case s := <-b.queue:
				if n+len(s.jobs) > bus.MaxBatch {
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
			b.storeJobs(pub, batch)
		}()
	}
}

// close stops queueing and fails what is left in the queue.
func (b *batcher) close(carry *submission) {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	failed := fmt.Errorf("%w: intake stopped", ErrUnavailable)
	if carry != nil {
		carry.done <- failed
	}
	for {
		select {
		case s := <-b.queue:
			s.done <- failed
		default:
			return
		}
	}
}

// storeJobs publishes the batch's jobs to JOBS, announces the stored ones
// and answers every submission.
func (b *batcher) storeJobs(pub *bus.BatchPublisher, batch []*submission) {
	var msgs []bus.Msg
	if len(batch) == 1 {
		msgs = batch[0].jobs
	} else {
		for _, s := range batch {
			msgs = append(msgs, s.jobs...)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), b.timeout)
	count, err := pub.Publish(ctx, msgs)
	cancel()
	stored := b.settle(batch, count, err)
	n := 0
	for _, s := range stored {
		n += len(s.jobs)
	}
	bus.Announce(b.nc, b.replica, msgs[:n])
	for _, s := range stored {
		s.done <- nil
	}
}

// settle splits a batch at the count of messages stored: submissions wholly
// inside it are returned; the others are answered with the error.
func (b *batcher) settle(batch []*submission, count int, err error) (stored []*submission) {
	i := 0
	var failed error
	for _, s := range batch {
		i += len(s.jobs)
		if i <= count {
			stored = append(stored, s)
			continue
		}
		if failed == nil {
			failed = b.classify(err)
		}
		s.done <- failed
	}
	return stored
}
