package intake

import (
	"sync"
	"time"

	"github.com/surveyor/surveyor/pkg/job"
)

// queuedJob is a job stored in JOBS that no worker has announced yet.
type queuedJob struct {
	kind    job.Kind
	doc     []byte // its JOBS message: the queued job document
	created time.Time
}

// queued answers GET for jobs that wait in JOBS. A new job is stored only
// there (one durable write per job), and a work-queue stream cannot be
// read by id, so every ingest replica remembers the jobs it knows to be
// waiting: its own accepts, the other replicas' announced accepts, and at
// start a scan of JOBS. A job leaves when a worker announces any status
// for it (from then on the status bucket answers) or after maxAge.
//
// It holds at most max jobs (ingest sets it to JOBS's own message limit,
// so a full map means a full queue); jobs beyond it are not remembered and
// answer 404 until a worker starts them. An entry costs its document plus
// about 100 bytes.
type queued struct {
	mu   sync.RWMutex
	jobs map[string]queuedJob
	// seen holds the ids that workers announced recently, so that an
	// accept announcement or a JOBS scan that arrives after the worker's
	// event does not bring the job back. Kept for seenTTL.
	seen map[string]time.Time
	max  int
}

// seenTTL is how long a worker's event outranks late news of the same job:
// far longer than any announcement or scan takes to arrive.
const seenTTL = 2 * time.Minute

func newQueued(max int) *queued {
	return &queued{jobs: map[string]queuedJob{}, seen: map[string]time.Time{}, max: max}
}

// add remembers a waiting job unless a worker already announced it or the
// map is full.
func (q *queued) add(id string, j queuedJob) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if _, ok := q.seen[id]; ok || len(q.jobs) >= q.max {
		return
	}
	q.jobs[id] = j
}

// get returns the document of a waiting job.
func (q *queued) get(id string) (queuedJob, bool) {
	q.mu.RLock()
	defer q.mu.RUnlock()
	j, ok := q.jobs[id]
	return j, ok
}

// started forgets a job a worker announced.
func (q *queued) started(id string, now time.Time) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.jobs, id)
	if len(q.seen) < q.max {
		q.seen[id] = now
	}
}

// prune drops jobs older than maxAge and announcements older than seenTTL.
func (q *queued) prune(maxAge time.Duration, now time.Time) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for id, j := range q.jobs {
		if now.Sub(j.created) >= maxAge {
			delete(q.jobs, id)
		}
	}
	for id, at := range q.seen {
		if now.Sub(at) >= seenTTL {
			delete(q.seen, id)
		}
	}
}

// len reports how many jobs are remembered.
func (q *queued) len() int {
	q.mu.RLock()
	defer q.mu.RUnlock()
	return len(q.jobs)
}
