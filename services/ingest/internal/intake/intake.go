// Package intake turns validated requests into stored jobs: it finds the
// job a repeat may share, publishes new jobs to JOBS together with their
// queued status, and estimates when they will be done. A job is answered
// only once JetStream has acknowledged storing it.
package intake

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/surveyor/surveyor/pkg/bus"
	"github.com/surveyor/surveyor/pkg/job"
	"github.com/surveyor/surveyor/pkg/jobstore"
	"github.com/surveyor/surveyor/pkg/obs"
	"github.com/surveyor/surveyor/pkg/worker"
	"github.com/surveyor/surveyor/services/ingest/internal/validate"
)

// Errors Submit returns; the API maps them to 503 and 429.
var (
	ErrUnavailable = errors.New("message bus unavailable")
	ErrQueueFull   = errors.New("job queue is full")
)

// Outcome is the answer for one request.
type Outcome struct {
	ID           string
	Status       job.Status
	Deduplicated bool
}

// Intake accepts jobs. It is safe for concurrent use.
type Intake struct {
	js       jetstream.JetStream
	store    *jobstore.Store
	cacheTTL time.Duration
	maxAge   time.Duration
	log      *slog.Logger
	index    *index
	est      *estimator
	batch    *batcher
}

// Config tunes an Intake.
type Config struct {
	CacheTTL  time.Duration // how long a finished job answers repeats
	ResultTTL time.Duration // how long any job is remembered
	Timeout   time.Duration // longest wait for JetStream's acks (2 s)
	Log       *slog.Logger
}

var (
	acceptedTotal = obs.Default.NewCounterVec("surveyor_jobs_accepted_total",
		"Jobs stored in JOBS by ingest, by kind.", "kind")
	dedupTotal = obs.Default.NewCounterVec("surveyor_jobs_deduplicated_total",
		"Requests answered with an existing job, by kind.", "kind")
)

// New returns an Intake. Run stores its jobs and keeps its view of the
// system fresh: Submit fails with ErrUnavailable unless Run is running.
func New(js jetstream.JetStream, store *jobstore.Store, cfg Config) *Intake {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 2 * time.Second
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	in := &Intake{js: js, store: store, cacheTTL: cfg.CacheTTL, maxAge: cfg.ResultTTL,
		log: cfg.Log, index: newIndex(), est: newEstimator()}
	in.batch = newBatcher(js.Conn(), store.KV(), cfg.Timeout, in.classify)
	obs.Default.NewGaugeFunc("surveyor_queue_depth", "Jobs in JOBS (queued or in flight), by kind.", "kind",
		func() map[string]float64 { d, _ := in.est.snapshot(time.Now()); return d })
	obs.Default.NewGaugeFunc("surveyor_worker_capacity", "Concurrency announced by live workers, by kind.", "kind",
		func() map[string]float64 { _, c := in.est.snapshot(time.Now()); return c })
	return in
}

// Submit stores a job for every distinct request that has no job to share
// and returns one outcome per request, in order, with the estimate for the
// last of them. Either every new job is stored or an error is returned.
func (in *Intake) Submit(ctx context.Context, reqs []validate.Request) ([]Outcome, int, error) {
	if in.js.Conn().Status() != nats.CONNECTED {
		return nil, 0, ErrUnavailable
	}
	now := time.Now().UTC()
	out := make([]Outcome, len(reqs))
	byKey := make(map[string]int, len(reqs)) // first request of each key
	var fresh []*job.Job
	var freshKeys []string
	var pending []newJob
	var dedupAhead int64
	for i, r := range reqs {
		key := r.Key()
		if first, ok := byKey[key]; ok {
			out[i] = out[first] // repeats inside one request share one job
			continue
		}
		byKey[key] = i
		if !r.Force {
			if e, ok := in.index.lookup(key, in.cacheTTL, now); ok {
				out[i] = Outcome{ID: e.id, Status: e.status, Deduplicated: true}
				if !e.status.Finished() {
					dedupAhead++
				}
				dedupTotal.With(string(r.Kind)).Inc()
				continue
			}
		}
		j := &job.Job{ID: uuid.NewString(), Kind: r.Kind, Status: job.Queued, URL: r.URL, Email: r.Email,
			Options: r.Options, MaxPages: r.MaxPages, Force: r.Force, Created: now}
		// A new job has no result: its JOBS message and its status
		// document are the same bytes.
		pending = append(pending, newJob{id: j.ID, kind: j.Kind, data: encodeQueued(j)})
		fresh, freshKeys = append(fresh, j), append(freshKeys, key)
		out[i] = Outcome{ID: j.ID, Status: job.Queued}
	}
	if len(pending) > 0 {
		if err := in.batch.store(ctx, pending); err != nil {
			return nil, 0, err
		}
	}
	for i, j := range fresh {
		in.index.put(freshKeys[i], entry{id: j.ID, status: job.Queued, created: j.Created})
		acceptedTotal.With(string(j.Kind)).Inc()
	}
	kind := reqs[0].Kind
	var eta int
	if len(fresh) > 0 {
		eta = in.est.accepted(kind, len(fresh), now)
	} else if dedupAhead > 0 {
		eta = in.est.estimate(kind, 0, now)
	}
	return out, eta, nil
}

func (in *Intake) classify(err error) error {
	if bus.IsQueueFull(err) {
		return ErrQueueFull
	}
	in.log.Warn("publish failed", "err", err)
	return fmt.Errorf("%w: %v", ErrUnavailable, err)
}

// Get returns a job as GET shows it.
func (in *Intake) Get(ctx context.Context, id string) (*job.Job, error) {
	if _, err := uuid.Parse(id); err != nil {
		return nil, jobstore.ErrNotFound
	}
	if in.js.Conn().Status() != nats.CONNECTED {
		return nil, ErrUnavailable
	}
	j, err := in.store.Get(ctx, id)
	if err != nil && !errors.Is(err, jobstore.ErrNotFound) {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return j, err
}

// Run keeps the index, the queue depths and the worker census current
// until ctx ends. The index learns of status changes from the workers'
// events and is seeded once from the status bucket; jobs that another
// ingest replica accepted are not announced while they wait, so a repeat
// arriving here then may start a second job (harmless: both complete).
func (in *Intake) Run(ctx context.Context) {
	nc := in.js.Conn()
	sub, err := nc.Subscribe(bus.WorkersSubject+".*", func(m *nats.Msg) { in.est.worker(m.Data, time.Now()) })
	if err == nil {
		defer sub.Unsubscribe()
	}
	// Subscribe before seeding: an event is never older than what the
	// bucket shows, and seed does not overwrite what an event recorded.
	events, err := nc.Subscribe(worker.EventsSubject+".*", func(m *nats.Msg) { in.statusEvent(m.Data) })
	if err == nil {
		defer events.Unsubscribe()
	}
	go in.seedIndex(ctx)
	go func() {
		if err := in.batch.run(ctx); err != nil {
			in.log.Error("intake batcher stopped: every submit will fail", "err", err)
		}
	}()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	lastPrune := time.Now()
	for {
		in.refreshDepth(ctx)
		if time.Since(lastPrune) > time.Minute {
			in.index.prune(in.cacheTTL, in.maxAge, time.Now())
			lastPrune = time.Now()
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (in *Intake) refreshDepth(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	s, err := in.js.Stream(ctx, bus.JobsStream)
	if err != nil {
		return
	}
	info, err := s.Info(ctx, jetstream.WithSubjectFilter("jobs.>"))
	if err != nil {
		return
	}
	for _, k := range job.Kinds {
		in.est.setDepth(k, int64(info.State.Subjects[job.JobSubject(k)]))
	}
}

// statusEvent records a worker's announcement of a job's new status and
// times finished jobs for the estimates.
func (in *Intake) statusEvent(data []byte) {
	var j job.Job
	if json.Unmarshal(data, &j) != nil {
		return
	}
	e := entryOf(&j)
	if j.Status == job.Completed && j.Started != nil && j.Finished != nil {
		in.est.observe(j.Kind, j.Finished.Sub(*j.Started))
	}
	in.index.put(validate.KeyOf(&j), e)
}

// seedIndex reads every job's status document once, so that repeats of jobs
// accepted before this process started are found. It retries until it has
// read the whole bucket or ctx ends.
func (in *Intake) seedIndex(ctx context.Context) {
	for ctx.Err() == nil {
		n, err := in.seedOnce(ctx)
		if err == nil {
			in.log.Info("de-duplication index seeded", "jobs", n)
			return
		}
		if ctx.Err() != nil {
			return
		}
		in.log.Warn("cannot seed the de-duplication index: will retry", "err", err)
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

func (in *Intake) seedOnce(ctx context.Context) (int, error) {
	w, err := in.store.KV().WatchAll(ctx, jetstream.IgnoreDeletes())
	if err != nil {
		return 0, err
	}
	defer w.Stop()
	n := 0
	for upd := range w.Updates() {
		if upd == nil {
			return n, nil // the initial values are all delivered
		}
		var j job.Job
		if json.Unmarshal(upd.Value(), &j) != nil {
			continue
		}
		in.index.seed(validate.KeyOf(&j), entryOf(&j))
		n++
	}
	return n, errors.New("status watch ended before the initial values")
}

func entryOf(j *job.Job) entry {
	e := entry{id: j.ID, status: j.Status, created: j.Created}
	if j.Finished != nil {
		e.finished = *j.Finished
	}
	return e
}
