package intake

import (
	"slices"
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
//
// The waiting jobs' documents are kept in a docArena and the map holds no
// pointer, so the garbage collector marks a few large chunks instead of one
// object per waiting job: with hundreds of thousands waiting, marking them
// one by one stretched every collection, and intake's tail latency with it.
type known struct {
	mu      sync.RWMutex
	waiting map[uuid.UUID]waitingSlot
	docs    docArena
	states  map[uuid.UUID]state
	max     int
}

// waitingSlot is a waitingJob as known keeps it: without pointers.
type waitingSlot struct {
	kind    uint8 // index in job.Kinds
	doc     docRef
	created int64 // Unix nanoseconds
}

func newKnown(max int) *known {
	return &known{waiting: map[uuid.UUID]waitingSlot{}, states: map[uuid.UUID]state{}, max: max}
}

// add remembers a waiting job unless it is already remembered, a worker
// already announced it (an announcement or a scan of JOBS may arrive after
// the worker's event) or the map is full.
func (k *known) add(id uuid.UUID, w waitingJob) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if _, ok := k.waiting[id]; ok {
		return
	}
	if _, ok := k.states[id]; ok || len(k.waiting) >= k.max {
		return
	}
	k.waiting[id] = waitingSlot{kind: uint8(slices.Index(job.Kinds, w.kind)),
		doc: k.docs.add(w.doc), created: w.created.UnixNano()}
}

// lookup returns what is known of a job: its document while it waits, or
// else the status last announced.
func (k *known) lookup(id uuid.UUID) (w waitingJob, s state, ok bool) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	if ws, ok := k.waiting[id]; ok {
		w = waitingJob{kind: job.Kinds[ws.kind], doc: k.docs.get(ws.doc), created: time.Unix(0, ws.created)}
		return w, state{kind: w.kind, status: job.Queued}, true
	}
	s, ok = k.states[id]
	return waitingJob{}, s, ok
}

// announced records a status a worker announced: the job waits no more.
func (k *known) announced(id uuid.UUID, s state) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.forgetWaitingLocked(id)
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
	k.forgetWaitingLocked(id)
	k.setLocked(id, s)
}

func (k *known) forgetWaitingLocked(id uuid.UUID) {
	if ws, ok := k.waiting[id]; ok {
		k.docs.release(ws.doc)
		delete(k.waiting, id)
	}
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
		if now.Sub(time.Unix(0, w.created)) >= maxAge {
			k.forgetWaitingLocked(id)
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
