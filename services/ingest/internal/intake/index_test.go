package intake

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/surveyor/surveyor/pkg/job"
)

// A worker can finish a job and announce it before ingest records its own
// accept of that job: the late "queued" must not hide the end, or repeats
// would wait on a job that is over.
func TestIndexKeepsAFinishedJobFinished(t *testing.T) {
	x := newIndex()
	key := digest("email|a@b.example")
	id := uuid.New()
	created := time.Now()
	x.put(key, newEntry(id, job.Running, created, time.Time{}))
	x.put(key, newEntry(id, job.Completed, created, created.Add(time.Second)))
	x.put(key, newEntry(id, job.Queued, created, time.Time{}))
	e, ok := x.lookup(key, time.Hour, created.Add(2*time.Second))
	if !ok || e.status() != job.Completed {
		t.Fatalf("after a late queued record the index says %+v (found %v), want completed", e.status(), ok)
	}

	// A retry's queued after running still lands: the job is not over.
	retried := uuid.New()
	other := digest("email|c@d.example")
	x.put(other, newEntry(retried, job.Running, created, time.Time{}))
	x.put(other, newEntry(retried, job.Queued, created, time.Time{}))
	if e, _ := x.lookup(other, time.Hour, created); e.status() != job.Queued {
		t.Fatalf("a retried job shows %s, want queued", e.status())
	}
}
