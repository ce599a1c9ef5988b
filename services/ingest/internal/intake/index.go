package intake

import (
	"crypto/sha256"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/surveyor/surveyor/pkg/job"
)

// entry is what de-duplication needs to know of the newest job for a key.
// It holds no pointer, so the collector need not look inside the map,
// which holds every recent job (see known).
type entry struct {
	id       uuid.UUID
	st       uint8 // index in statuses
	created  int64 // Unix nanoseconds
	finished int64 // Unix nanoseconds; 0 until the job ends
}

// statuses are the job statuses an entry can hold, by code.
var statuses = []job.Status{job.Queued, job.Running, job.Completed, job.Failed}

func newEntry(id uuid.UUID, s job.Status, created, finished time.Time) entry {
	e := entry{id: id, st: uint8(slices.Index(statuses, s)), created: created.UnixNano()}
	if !finished.IsZero() {
		e.finished = finished.UnixNano()
	}
	return e
}

func (e entry) status() job.Status { return statuses[e.st] }

// index maps request keys to their newest job. Every ingest replica keeps
// its own, fed by its accepts, the other replicas' announced accepts, the
// workers' status events and, once at start, the status bucket and the
// jobs waiting in JOBS, so a repeat finds its job without a store read.
type index struct {
	mu    sync.RWMutex
	byKey map[keyDigest]entry
}

// keyDigest stands for a request key in the index: the first 16 bytes of
// its SHA-256. The index holds every recent job; a digest kept in the
// map's slot, instead of a key string apart, is one heap object less per
// job for the garbage collector to mark, and the slots copy faster as the
// map grows. Two keys sharing a digest would take finding a second
// preimage of 128 bits.
type keyDigest [16]byte

func digest(key string) keyDigest {
	var buf [256]byte // keys are short: no allocation to hash one
	sum := sha256.Sum256(append(buf[:0], key...))
	return keyDigest(sum[:16])
}

func newIndex() *index { return &index{byKey: map[keyDigest]entry{}} }

// lookup returns the job a repeat of key may share: queued, running, or
// finished within ttl.
func (x *index) lookup(key keyDigest, ttl time.Duration, now time.Time) (entry, bool) {
	x.mu.RLock()
	e, ok := x.byKey[key]
	x.mu.RUnlock()
	if !ok {
		return entry{}, false
	}
	switch e.status() {
	case job.Queued, job.Running:
		return e, true
	case job.Completed, job.Failed:
		return e, now.UnixNano()-e.finished < int64(ttl)
	}
	return entry{}, false
}

// put records e unless a newer job (by creation) already holds the key.
// A job's own updates land, except that a finished job stays finished: a
// fast worker's events can arrive before ingest records its own accept.
func (x *index) put(key keyDigest, e entry) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if old, ok := x.byKey[key]; ok {
		if old.id != e.id && old.created > e.created {
			return
		}
		if old.id == e.id && old.status().Finished() && !e.status().Finished() {
			return
		}
	}
	x.byKey[key] = e
}

// seed records e as put does, except that it never replaces what is already
// known of the same job: seeding reads older documents than the events and
// accepts that may have arrived meanwhile.
func (x *index) seed(key keyDigest, e entry) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if old, ok := x.byKey[key]; ok && (old.id == e.id || old.created > e.created) {
		return
	}
	x.byKey[key] = e
}

// prune drops entries no repeat can use any more.
func (x *index) prune(ttl, maxAge time.Duration, now time.Time) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for k, e := range x.byKey {
		if (e.status().Finished() && now.UnixNano()-e.finished >= int64(ttl)) || now.UnixNano()-e.created >= int64(maxAge) {
			delete(x.byKey, k)
		}
	}
}
