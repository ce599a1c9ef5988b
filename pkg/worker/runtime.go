// Package worker runs job handlers on the JOBS stream. Every replica of a
// kind shares one durable pull consumer, so adding replicas splits the work.
// A job is acknowledged only after its final document is stored; a worker
// that dies mid-job leaves it to be delivered again.
//
// The runtime is a loop (pull, decode, run the chain, settle the message)
// around the handler wrapped in middlewares, one concern per file. New
// lists them in the order a delivery passes through them.
package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/surveyor/surveyor/pkg/bus"
	"github.com/surveyor/surveyor/pkg/job"
	"github.com/surveyor/surveyor/pkg/jobstore"
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

// Runtime pulls jobs of one kind and runs a Handler on them.
type Runtime struct {
	cfg   Config
	js    jetstream.JetStream
	chain Handler       // the handler in its middlewares
	again time.Duration // delay of a hand-back no middleware timed
	id    string

	mu      sync.Mutex
	pending uint64 // consumer's pending count, refreshed by announce
}

// New prepares a runtime; Run starts it.
func New(js jetstream.JetStream, store *jobstore.Store, cfg Config, h Handler) *Runtime {
	cfg.defaults()
	log := cfg.Log
	rec := &recorder{store: store, nc: js.Conn(), log: log}
	// A middleware that cannot store what it must hands the job back
	// after the first backoff step, without counting a failed attempt.
	again := cfg.Backoff(1)
	r := &Runtime{cfg: cfg, js: js, again: again, id: uuid.NewString()}
	// Outermost first. Of the three that decide what a handler's error
	// means, the innermost sees it first: handBack takes an attempt cut
	// short by shutdown, deadLetter a final error, retry any other.
	r.chain = chain(h,
		skipFinished(store, log),
		markRunning(rec, again, log),
		retry(rec, cfg.Backoff, log),
		deadLetter(rec, cfg.MaxDeliver, again, log),
		handBack(rec, log),
		storeResult(rec, again, log),
		reportProgress(rec, progressEvery, log),
		measure(cfg.MaxDeliver),
		recoverPanics(log),
	)
	registerMetrics(cfg.Kind, r.Pending)
	return r
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

// process runs one delivery of one job through the chain and settles it.
func (r *Runtime) process(ctx context.Context, msg jetstream.Msg) {
	j, err := r.decode(msg)
	if err != nil {
		r.cfg.Log.Error("undecodable job: dropped", "subject", msg.Subject(), "err", err)
		msg.TermWithReason("undecodable job document")
		return
	}
	// Keep the job ours while we work: the heartbeat resets AckWait.
	stop := keepAlive(msg, r.cfg.AckWait/3)
	_, err = r.chain.Handle(ctx, j, nil)
	stop()
	settle(ctx, msg, err, r.again, jobLog(r.cfg.Log, j))
}

// decode reads the job a message carries; its Attempts is the number of
// this delivery (1 for the first).
func (r *Runtime) decode(msg jetstream.Msg) (*job.Job, error) {
	meta, err := msg.Metadata()
	if err != nil {
		return nil, err
	}
	var j job.Job
	if err := j.UnmarshalJSON(msg.Data()); err != nil {
		return nil, err
	}
	if j.ID == "" || j.Kind != r.cfg.Kind {
		return nil, fmt.Errorf("job id %q of kind %q on a %s consumer", j.ID, j.Kind, r.cfg.Kind)
	}
	j.Attempts = int(meta.NumDelivered)
	return &j, nil
}
