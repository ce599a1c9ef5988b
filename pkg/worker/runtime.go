// Package worker runs job handlers on the JOBS stream. Every replica of a
// kind shares one durable pull consumer, so adding replicas splits the work.
// A job is acknowledged only after its final document is stored; a worker
// that dies mid-job leaves it to be delivered again.
package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/surveyor/surveyor/pkg/bus"
	"github.com/surveyor/surveyor/pkg/job"
	"github.com/surveyor/surveyor/pkg/jobstore"
	"github.com/surveyor/surveyor/pkg/obs"
)

// Config tunes one worker process.
type Config struct {
	Kind        job.Kind
	Concurrency int           // jobs handled at once by this process
	AckWait     time.Duration // silence after which the server redelivers
	MaxDeliver  int           // deliveries before a job ends failed
	// Backoff is the delay before retry n (1 = the first retry).
	Backoff func(n int) time.Duration
	// Grace is how long a stopping worker lets in-flight jobs finish
	// before it cancels them and hands them back for redelivery.
	Grace time.Duration
	// MaxAckPending caps unacknowledged jobs across all replicas.
	MaxAckPending int
	Log           *slog.Logger
}

func (c *Config) defaults() {
	if c.Concurrency < 1 {
		c.Concurrency = 1
	}
	if c.AckWait <= 0 {
		c.AckWait = 30 * time.Second
	}
	if c.MaxDeliver < 1 {
		c.MaxDeliver = 5
	}
	if c.Backoff == nil {
		c.Backoff = ExponentialBackoff(time.Second, time.Minute)
	}
	if c.Grace <= 0 {
		c.Grace = 20 * time.Second
	}
	if c.MaxAckPending < 1 {
		c.MaxAckPending = 1000
	}
	if c.Log == nil {
		c.Log = slog.Default()
	}
}

// ExponentialBackoff doubles from base up to max.
func ExponentialBackoff(base, max time.Duration) func(int) time.Duration {
	return func(n int) time.Duration {
		d := base
		for i := 1; i < n && d < max; i++ {
			d *= 2
		}
		return min(d, max)
	}
}

var (
	jobsTotal = obs.Default.NewCounterVec("surveyor_jobs_total",
		"Jobs that ended, by kind and final status.", "kind", "status")
	retriesTotal = obs.Default.NewCounterVec("surveyor_job_retries_total",
		"Job attempts that failed and were scheduled again.", "kind")
	deadTotal = obs.Default.NewCounterVec("surveyor_deadletters_total",
		"Jobs moved to DEADLETTER after their last attempt.", "kind")
	jobSeconds = obs.Default.NewHistogramVec("surveyor_job_duration_seconds",
		"Time a handler spent on one attempt, by kind and outcome.", obs.DurationBuckets, "kind", "outcome")
)

// Runtime pulls jobs of one kind and runs a Handler on them.
type Runtime struct {
	cfg     Config
	js      jetstream.JetStream
	store   *jobstore.Store
	handler Handler
	id      string

	mu      sync.Mutex
	pending uint64 // consumer's pending count, refreshed periodically
}

// New prepares a runtime; Run starts it.
func New(js jetstream.JetStream, store *jobstore.Store, cfg Config, h Handler) *Runtime {
	cfg.defaults()
	r := &Runtime{cfg: cfg, js: js, store: store, handler: h, id: uuid.NewString()}
	obs.Default.NewGaugeFunc("surveyor_consumer_pending",
		"Jobs waiting for or held by the kind's consumer, as last read.", "kind",
		func() map[string]float64 { return map[string]float64{string(cfg.Kind): float64(r.Pending())} })
	return r
}

// Pending is the consumer's backlog seen at the last refresh.
func (r *Runtime) Pending() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.pending
}

// Run consumes until ctx ends, then stops pulling and gives in-flight jobs
// the grace period before it cancels them and returns them to the queue.
func (r *Runtime) Run(ctx context.Context) error {
	k := r.cfg.Kind
	cons, err := r.js.CreateOrUpdateConsumer(ctx, bus.JobsStream, jetstream.ConsumerConfig{
		Durable:       bus.ConsumerName(k),
		Description:   "shared by every " + string(k) + " worker",
		FilterSubject: bus.JobSubject(k),
		AckPolicy:     jetstream.AckExplicitPolicy,
		DeliverPolicy: jetstream.DeliverAllPolicy,
		AckWait:       r.cfg.AckWait,
		MaxDeliver:    -1, // the runtime counts attempts itself and dead-letters
		MaxAckPending: r.cfg.MaxAckPending,
	})
	if err != nil {
		return fmt.Errorf("consumer %s: %w", bus.ConsumerName(k), err)
	}
	go r.announce(ctx, cons)

	// Each slot pulls one job only when it is free: a prefetched job would
	// wait in a buffer while its AckWait ran out and be delivered twice.
	// Handlers get a context that outlives ctx by the grace period.
	hctx, cancelHandlers := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelHandlers()
	var wg sync.WaitGroup
	for range r.cfg.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				msg, err := cons.Next(jetstream.FetchContext(ctx))
				if err != nil {
					if ctx.Err() == nil && !errors.Is(err, nats.ErrTimeout) && !errors.Is(err, context.DeadlineExceeded) {
						r.cfg.Log.Warn("pull failed", "err", err)
						time.Sleep(250 * time.Millisecond)
					}
					continue
				}
				r.process(hctx, msg)
			}
		}()
	}
	<-ctx.Done()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(r.cfg.Grace):
		r.cfg.Log.Warn("grace period over: returning in-flight jobs to the queue")
		cancelHandlers()
		<-done
	}
	return nil
}

// announce tells ingest this worker's capacity and keeps Pending fresh.
func (r *Runtime) announce(ctx context.Context, cons jetstream.Consumer) {
	nc := r.js.Conn()
	beat, _ := json.Marshal(map[string]any{"id": r.id, "kind": r.cfg.Kind, "concurrency": r.cfg.Concurrency})
	t := time.NewTicker(2 * time.Second)
	defer t.Stop()
	for {
		nc.Publish(bus.WorkersSubject(r.cfg.Kind), beat)
		ictx, cancel := context.WithTimeout(ctx, 2*time.Second)
		if info, err := cons.Info(ictx); err == nil {
			r.mu.Lock()
			r.pending = info.NumPending + uint64(info.NumAckPending)
			r.mu.Unlock()
		}
		cancel()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// process runs one delivery of one job to its end or its next retry.
func (r *Runtime) process(ctx context.Context, msg jetstream.Msg) {
	log := r.cfg.Log
	meta, err := msg.Metadata()
	if err != nil {
		log.Error("message without metadata", "err", err)
		msg.Term()
		return
	}
	var j job.Job
	if err := j.UnmarshalJSON(msg.Data()); err != nil || j.ID == "" || j.Kind != r.cfg.Kind {
		log.Error("undecodable job: dropped", "subject", msg.Subject(), "err", err)
		msg.TermWithReason("undecodable job document")
		return
	}
	log = log.With("job_id", j.ID, "kind", j.Kind, "attempt", meta.NumDelivered)

	// Keep the job ours while we work: the heartbeat resets AckWait.
	stop := r.heartbeat(msg)
	defer stop()

	// A redelivery of a job whose result is already stored (the worker died
	// between storing and acknowledging) must not produce a second result.
	// A first delivery cannot be one: JOBS de-duplicates by job id.
	if meta.NumDelivered > 1 && r.finished(ctx, j.ID) {
		log.Info("already finished: acknowledging redelivery")
		msg.DoubleAck(ctx)
		return
	}

	now := time.Now().UTC()
	j.Status, j.Started, j.Attempts = job.Running, &now, int(meta.NumDelivered)
	j.Error, j.Result, j.Finished = "", nil, nil
	if err := r.store.Record(ctx, &j); err != nil {
		log.Warn("cannot record running status", "err", err)
		msg.NakWithDelay(r.cfg.Backoff(1))
		return
	}

	prog := &progress{store: r.store, job: j, log: log}
	start := time.Now()
	result, herr := r.call(ctx, &j, prog)
	prog.stop()
	elapsed := time.Since(start)

	switch {
	case herr == nil:
		r.complete(ctx, msg, &j, result, elapsed, log)
	case ctx.Err() != nil && !IsPermanent(herr):
		// Shutting down: hand the job back without counting it a failure.
		log.Info("returning job to the queue at shutdown")
		j.Status, j.Started = job.Queued, nil
		r.store.Record(context.Background(), &j)
		msg.NakWithDelay(time.Second)
	case IsPermanent(herr) || int(meta.NumDelivered) >= r.cfg.MaxDeliver:
		jobSeconds.With(string(j.Kind), "failed").Observe(elapsed.Seconds())
		r.fail(ctx, msg, &j, herr, log)
	default:
		jobSeconds.With(string(j.Kind), "retry").Observe(elapsed.Seconds())
		retriesTotal.With(string(j.Kind)).Inc()
		delay := r.cfg.Backoff(int(meta.NumDelivered))
		log.Warn("attempt failed: will retry", "err", herr, "delay", delay.String())
		j.Status, j.Started, j.Error = job.Queued, nil, ""
		r.store.Record(ctx, &j)
		msg.NakWithDelay(delay)
	}
}

// finished reports whether the job's status says it has ended.
func (r *Runtime) finished(ctx context.Context, id string) bool {
	cur, err := r.store.Status(ctx, id)
	return err == nil && cur.Status.Finished()
}

// call runs the handler, turning a panic into an error.
func (r *Runtime) call(ctx context.Context, j *job.Job, p Progress) (result any, err error) {
	defer func() {
		if v := recover(); v != nil {
			r.cfg.Log.Error("handler panic", "job_id", j.ID, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			err = fmt.Errorf("internal error: handler panicked: %v", v)
		}
	}()
	return r.handler.Handle(ctx, j, p)
}

func (r *Runtime) complete(ctx context.Context, msg jetstream.Msg, j *job.Job, result any, elapsed time.Duration, log *slog.Logger) {
	data, err := json.Marshal(result)
	if err != nil {
		r.fail(ctx, msg, j, fmt.Errorf("result not encodable: %w", err), log)
		return
	}
	now := time.Now().UTC()
	j.Status, j.Finished, j.Result, j.Progress = job.Completed, &now, data, nil
	if err := r.store.Finish(ctx, j); err != nil {
		log.Error("cannot store result: will retry", "err", err)
		msg.NakWithDelay(r.cfg.Backoff(1))
		return
	}
	if err := msg.DoubleAck(ctx); err != nil {
		log.Warn("ack failed after result was stored", "err", err)
	}
	jobSeconds.With(string(j.Kind), "completed").Observe(elapsed.Seconds())
	jobsTotal.With(string(j.Kind), string(job.Completed)).Inc()
	log.Info("job completed", "seconds", elapsed.Seconds())
}

// fail ends the job: failed in RESULTS and the status, a copy in DEADLETTER.
func (r *Runtime) fail(ctx context.Context, msg jetstream.Msg, j *job.Job, cause error, log *slog.Logger) {
	now := time.Now().UTC()
	j.Status, j.Finished, j.Error, j.Result, j.Progress = job.Failed, &now, cause.Error(), nil, nil
	data := j.AppendJSON(nil)
	dl := nats.NewMsg(bus.DeadLetterSubject(j.Kind))
	dl.Data = data
	dl.Header.Set(bus.JobIDHeader, j.ID)
	if _, err := r.js.PublishMsg(ctx, dl, jetstream.WithMsgID("dead."+j.ID)); err != nil {
		log.Error("cannot dead-letter: will retry", "err", err)
		msg.NakWithDelay(r.cfg.Backoff(1))
		return
	}
	if err := r.store.Finish(ctx, j); err != nil {
		log.Error("cannot store failure: will retry", "err", err)
		msg.NakWithDelay(r.cfg.Backoff(1))
		return
	}
	msg.DoubleAck(ctx)
	deadTotal.With(string(j.Kind)).Inc()
	jobsTotal.With(string(j.Kind), string(job.Failed)).Inc()
	log.Warn("job failed", "err", cause)
}

// heartbeat tells the server the job is alive every AckWait/3.
func (r *Runtime) heartbeat(msg jetstream.Msg) (stop func()) {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(r.cfg.AckWait / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				msg.InProgress()
			}
		}
	}()
	return func() { close(done) }
}

// progress stores a running job's progress at most once a second.
type progress struct {
	store *jobstore.Store
	log   *slog.Logger

	mu      sync.Mutex
	job     job.Job
	last    time.Time
	pending json.RawMessage
	timer   *time.Timer
	stopped bool
}

const progressEvery = time.Second

func (p *progress) Report(v any) {
	data, err := json.Marshal(v)
	if err != nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return
	}
	p.pending = data
	if wait := progressEvery - time.Since(p.last); wait > 0 {
		if p.timer == nil {
			p.timer = time.AfterFunc(wait, p.flush)
		}
		return
	}
	p.flushLocked()
}

func (p *progress) flush() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.timer = nil
	if !p.stopped {
		p.flushLocked()
	}
}

func (p *progress) flushLocked() {
	if p.pending == nil {
		return
	}
	p.job.Progress, p.pending, p.last = p.pending, nil, time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := p.store.Put(ctx, &p.job); err != nil {
		p.log.Warn("cannot store progress", "err", err)
	}
}

func (p *progress) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopped = true
	if p.timer != nil {
		p.timer.Stop()
	}
}
