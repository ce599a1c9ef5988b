// Package intake turns validated requests into stored jobs: it finds the
// job a repeat may share, publishes new jobs to JOBS (their only durable
// write), answers GET from what it knows of each job, and estimates when
// jobs will be done. A job is answered only once JetStream has acknowledged
// storing it.
package intake

import (
	"bytes"
	"context"
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
	known    *known
	est      *estimator
	batch    *batcher
	replica  string // this process among the ingest replicas
	timeout  time.Duration
}

// Config tunes an Intake.
type Config struct {
	CacheTTL  time.Duration // how long a finished job answers repeats
	ResultTTL time.Duration // how long any job is remembered
	Timeout   time.Duration // longest wait for JetStream's acks (2 s)
	// MaxQueued bounds the waiting jobs, and the statuses, remembered for
	// GET (JOBS's own message limit is the natural value; default
	// 1,000,000).
	MaxQueued int
	Log       *slog.Logger
}

var (
	acceptedTotal = obs.Default.NewCounterVec("surveyor_jobs_accepted_total",
		"Jobs stored in JOBS by ingest, by kind.", "kind")
	dedupTotal = obs.Default.NewCounterVec("surveyor_jobs_deduplicated_total",
		"Requests answered with an existing job, by kind.", "kind")
)

// New returns an Intake. Run stores its jobs and keeps its view of the
// system fresh: new jobs wait for Run to store them, and once Run has
// ended Submit fails with ErrUnavailable.
func New(js jetstream.JetStream, store *jobstore.Store, cfg Config) *Intake {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 2 * time.Second
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.MaxQueued <= 0 {
		cfg.MaxQueued = 1_000_000
	}
	in := &Intake{js: js, store: store, cacheTTL: cfg.CacheTTL, maxAge: cfg.ResultTTL,
		log: cfg.Log, index: newIndex(), known: newKnown(cfg.MaxQueued), est: newEstimator(),
		replica: uuid.NewString(), timeout: cfg.Timeout}
	in.batch = newBatcher(js.Conn(), in.replica, cfg.Timeout, in.classify)
	obs.Default.NewGaugeFunc("surveyor_queue_depth", "Jobs in JOBS (queued or in flight), by kind.", "kind",
		func() map[string]float64 { d, _ := in.est.snapshot(time.Now()); return d })
	obs.Default.NewGaugeFunc("surveyor_worker_capacity", "Concurrency announced by live workers, by kind.", "kind",
		func() map[string]float64 { _, c := in.est.snapshot(time.Now()); return c })
	return in
}

// Submit stores a job for every distinct request that has no job to share
// and returns one outcome per request, in order, with the estimate for the
// last of them. Either every new job is stored or an error is returned.
func (in *Intake) Submit(ctx context.Context, reqs []job.Request) ([]Outcome, int, error) {
	if in.js.Conn().Status() != nats.CONNECTED {
		return nil, 0, ErrUnavailable
	}
	now := time.Now().UTC()
	out := make([]Outcome, len(reqs))
	var byKey map[keyDigest]int // first request of each key, when there are several
	if len(reqs) > 1 {
		byKey = make(map[keyDigest]int, len(reqs))
	}
	var fresh []newJob
	var pending []bus.Msg
	var dedupAhead int64
	var scratch [512]byte
	for i, r := range reqs {
		key := digest(r.Key())
		if first, ok := byKey[key]; ok {
			out[i] = out[first] // repeats inside one request share one job
			continue
		}
		if byKey != nil {
			byKey[key] = i
		}
		if !r.Force {
			if e, ok := in.index.lookup(key, in.cacheTTL, now); ok {
				out[i] = Outcome{ID: e.id.String(), Status: e.status(), Deduplicated: true}
				if !e.status().Finished() {
					dedupAhead++
				}
				dedupTotal.With(string(r.Kind)).Inc()
				continue
			}
		}
		id := uuid.New()
		j := job.Job{ID: id.String(), Kind: r.Kind, Status: job.Queued, URL: r.URL, Email: r.Email,
			Options: r.Options, MaxPages: r.MaxPages, Force: r.Force, Created: now}
		// A new job has no result: its JOBS message is also what GET
		// shows while it waits (known copies it into its arena). The
		// batcher holds each message until it is stored, so each is
		// copied out of the scratch buffer.
		pending = append(pending, bus.Msg{Subject: bus.JobSubject(j.Kind), ID: j.ID,
			Data: bytes.Clone(j.AppendJSON(scratch[:0]))})
		fresh = append(fresh, newJob{req: i, key: key, id: id})
		out[i] = Outcome{ID: j.ID, Status: job.Queued}
	}
	if len(pending) > 0 {
		if err := in.batch.store(ctx, pending); err != nil {
			return nil, 0, err
		}
	}
	for n, f := range fresh {
		k := reqs[f.req].Kind
		in.index.put(f.key, newEntry(f.id, job.Queued, now, time.Time{}))
		in.known.add(f.id, waitingJob{kind: k, doc: pending[n].Data, created: now})
		acceptedTotal.With(string(k)).Inc()
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

// Get returns a job of kind k as GET shows it, asking the server at most
// once for a job it has heard of: a waiting job from memory, a finished one
// from RESULTS (then the status bucket, should the result have aged out
// first), any other from the status bucket. Of a job it has not heard
// of (a lost accept announcement, a status pushed out of memory, an id that
// never was) it asks the status bucket, then RESULTS if the job finished or
// is not there: two requests.
func (in *Intake) Get(ctx context.Context, k job.Kind, id string) (*job.Job, error) {
	uid, err := uuid.Parse(id)
	if err != nil {
		return nil, jobstore.ErrNotFound
	}
	if in.js.Conn().Status() != nats.CONNECTED {
		return nil, ErrUnavailable
	}
	w, st, ok := in.known.lookup(uid)
	var j *job.Job
	switch {
	case ok && st.kind != k:
		return nil, jobstore.ErrNotFound
	case w.doc != nil:
		j = new(job.Job)
		if err := j.UnmarshalJSON(w.doc); err != nil {
			return nil, err
		}
		return j, nil
	case ok && st.status.Finished():
		j, err = in.store.Final(ctx, k, id)
		if errors.Is(err, jobstore.ErrNotFound) {
			j, err = in.store.Status(ctx, id) // the result aged out first
		}
	default:
		// A status that says finished (a lost event, or one never heard)
		// is followed by a read of RESULTS.
		j, err = in.store.Get(ctx, id)
		if errors.Is(err, jobstore.ErrNotFound) {
			j, err = in.store.Final(ctx, k, id) // its status expired first
		}
	}
	if err != nil && !errors.Is(err, jobstore.ErrNotFound) {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return j, err
}

// Run keeps the index, the waiting jobs, the queue depths and the worker
// census current until ctx ends. It follows the workers' status events and
// the other replicas' accept announcements, and reads once, at start, the
// status bucket and the jobs waiting in JOBS.
func (in *Intake) Run(ctx context.Context) {
	nc := in.js.Conn()
	sub, err := nc.Subscribe(bus.AllWorkersSubject, func(m *nats.Msg) { in.est.worker(m.Data, time.Now()) })
	if err == nil {
		defer sub.Unsubscribe()
	}
	// Subscribe before seeding: an event is never older than what the
	// bucket or JOBS shows, and seeding does not overwrite what an event
	// recorded.
	events, err := nc.Subscribe(bus.AllEventsSubject, func(m *nats.Msg) { in.statusEvent(m.Data) })
	if err == nil {
		defer events.Unsubscribe()
	}
	accepted, err := nc.Subscribe(bus.AcceptedSubject, in.acceptedElsewhere)
	if err == nil {
		defer accepted.Unsubscribe()
	}
	go func() {
		// The status bucket first: what a worker recorded of a job
		// outranks its queued document in JOBS.
		in.seed(ctx, "status bucket", in.seedFromStatus)
		in.seed(ctx, "JOBS", in.seedFromJobs)
	}()
	batching := make(chan struct{})
	defer func() { <-batching }() // Submit fails once Run has returned
	go func() {
		defer close(batching)
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
			in.known.prune(in.maxAge, time.Now())
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
	info, err := s.Info(ctx, jetstream.WithSubjectFilter(bus.AllJobsSubject))
	if err != nil {
		return
	}
	for _, k := range job.Kinds {
		in.est.setDepth(k, int64(info.State.Subjects[bus.JobSubject(k)]))
	}
}

// statusEvent records a worker's announcement of a job's new status and
// times finished jobs for the estimates. Any status means the job has left
// the waiting jobs: the server answers for it from now on.
func (in *Intake) statusEvent(data []byte) {
	j, id, ok := decode(data)
	if !ok {
		return
	}
	in.known.announced(id, state{kind: j.Kind, status: j.Status, at: time.Now()})
	if j.Status == job.Completed && j.Started != nil && j.Finished != nil {
		in.est.observe(j.Kind, j.Finished.Sub(*j.Started))
	}
	in.index.put(digest(job.KeyOf(&j)), entryOf(&j, id))
}

// acceptedElsewhere learns the jobs another ingest replica stored.
func (in *Intake) acceptedElsewhere(m *nats.Msg) {
	replica, docs := bus.Accepted(m)
	if replica == in.replica {
		return // ours: already known
	}
	for doc := range docs {
		in.waiting(doc, in.index.put)
	}
}

// waiting records the queued document of a job stored in JOBS, for GET and
// for de-duplication (through record).
func (in *Intake) waiting(doc []byte, record func(keyDigest, entry)) bool {
	j, id, ok := decode(doc)
	if !ok || j.Status != job.Queued {
		return false
	}
	in.known.add(id, waitingJob{kind: j.Kind, doc: doc, created: j.Created})
	record(digest(job.KeyOf(&j)), entryOf(&j, id))
	return true
}

// seed runs one of the start-up reads until it succeeds or ctx ends.
func (in *Intake) seed(ctx context.Context, what string, once func(context.Context) (int, error)) {
	for ctx.Err() == nil {
		n, err := once(ctx)
		if err == nil {
			in.log.Info("seeded from "+what, "jobs", n)
			return
		}
		if ctx.Err() != nil {
			return
		}
		in.log.Warn("cannot read "+what+" at start: will retry", "err", err)
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// seedFromStatus reads every job's status document once, so that repeats
// of jobs that workers have seen are found.
func (in *Intake) seedFromStatus(ctx context.Context) (int, error) {
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
		j, id, ok := decode(upd.Value())
		if !ok {
			continue
		}
		in.index.seed(digest(job.KeyOf(&j)), entryOf(&j, id))
		in.known.seed(id, state{kind: j.Kind, status: j.Status, at: time.Now()})
		n++
	}
	return n, errors.New("status watch ended before the initial values")
}

// seedFromJobs reads every job waiting in JOBS once, for GET and for
// de-duplication: jobs accepted before this process started, here or by
// another replica.
func (in *Intake) seedFromJobs(ctx context.Context) (int, error) {
	n := 0
	err := bus.ScanStream(ctx, in.js, bus.JobsStream, in.timeout, func(m *nats.Msg) {
		if in.waiting(m.Data, in.index.seed) {
			n++
		}
	})
	return n, err
}

// newJob is a request of a Submit that gets a new job.
type newJob struct {
	req int // its index in the Submit
	key keyDigest
	id  uuid.UUID
}

// decode reads a job document another process wrote; one without a valid
// id is of no use.
func decode(doc []byte) (j job.Job, id uuid.UUID, ok bool) {
	if j.UnmarshalJSON(doc) != nil {
		return j, id, false
	}
	id, err := uuid.Parse(j.ID)
	return j, id, err == nil
}

func entryOf(j *job.Job, id uuid.UUID) entry {
	var finished time.Time
	if j.Finished != nil {
		finished = *j.Finished
	}
	return newEntry(id, j.Status, j.Created, finished)
}
