package intake

import (
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/surveyor/surveyor/pkg/job"
)

// waitingJob is a job stored in JOBS that no worker has announced yet.
type waitingJob struct {
	kind    job.Kind
	doc     []byte // its JOBS message: the queued job document
	created time.Time
}

// state is what the last worker event (or, at start, the status bucket)
// said of a job.
type state struct {
	kind   job.Kind
	status job.Status
	at     time.Time // when it was learnt
}

// known is where each job is, so that GET asks the server at most once.
//
// A waiting job is answered from here: a new job is stored only in JOBS
// (one durable write per job), and a work-queue stream cannot be read by
// id, so every ingest replica remembers the jobs it knows to be waiting:
// its own accepts, the other replicas' announced accepts, and at start a
// scan of JOBS. Once a worker announces any status for a job, the job
// leaves the waiting ones and its status is kept instead: a finished job is
// then read from RESULTS, any other from the status bucket.
//
// Each map holds at most max jobs (ingest sets it to JOBS's own message
// limit, so full waiting jobs mean a full queue): waiting jobs beyond it
// are not remembered and answer 404 until a worker starts them; a new
// status pushes out an arbitrary old one, whose job GET then finds by
// asking the server. A waiting job costs its document plus about 100
// bytes, a status about 100 bytes.
//
// Jobs are keyed by their ids' 16 bytes: a map grows and is scanned by the
// garbage collector faster without a string per key.
type known struct {
	mu      sync.RWMutex
	waiting map[uuid.UUID]waitingJob
	states  map[uuid.UUID]state
	max     int
}

func newKnown(max int) *known {
	return &known{waiting: map[uuid.UUID]waitingJob{}, states: map[uuid.UUID]state{}, max: max}
}

// add remembers a waiting job unless a worker already announced it (an
// announcement or a scan of JOBS may arrive after the worker's event) or
// the map is full.
func (k *known) add(id uuid.UUID, w waitingJob) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if _, ok := k.states[id]; ok || len(k.waiting) >= k.max {
		return
	}
	k.waiting[id] = w
}

// lookup returns what is known of a job: its document while it waits, or
// else the status last announced.
func (k *known) lookup(id uuid.UUID) (w waitingJob, s state, ok bool) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	if w, ok = k.waiting[id]; ok {
		return w, state{kind: w.kind, status: job.Queued}, true
	}
	s, ok = k.states[id]
	return waitingJob{}, s, ok
}

// announced records a status a worker announced: the job waits no more.
func (k *known) announced(id uuid.UUID, s state) {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.waiting, id)
	k.setLocked(id, s)
}

// seed records a status read from the status bucket at start, unless an
// event, which is never older, arrived first.
func (k *known) seed(id uuid.UUID, s state) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if _, ok := k.states[id]; ok {
		return
	}
	delete(k.waiting, id)
	k.setLocked(id, s)
}

func (k *known) setLocked(id uuid.UUID, s state) {
	if _, ok := k.states[id]; !ok && len(k.states) >= k.max {
		for old := range k.states {
			delete(k.states, old)
			break
		}
	}
	k.states[id] = s
}

// prune forgets what is older than maxAge: the server has forgotten it too.
func (k *known) prune(maxAge time.Duration, now time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for id, w := range k.waiting {
		if now.Sub(w.created) >= maxAge {
			delete(k.waiting, id)
		}
	}
	for id, s := range k.states {
		if now.Sub(s.at) >= maxAge {
			delete(k.states, id)
		}
	}
}

// waitingLen reports how many waiting jobs are remembered.
func (k *known) waitingLen() int {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return len(k.waiting)
}
