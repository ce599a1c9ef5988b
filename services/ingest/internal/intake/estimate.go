package intake

import (
	"encoding/json"
	"math"
	"sync"
	"time"

	"github.com/surveyor/surveyor/pkg/job"
)

// estimator predicts seconds until a job is done from what it observes:
// the queue depth per kind, recent processing times, and the concurrency
// that running workers announce.
type estimator struct {
	mu      sync.Mutex
	avg     map[job.Kind]float64 // seconds, exponentially weighted
	depth   map[job.Kind]int64   // jobs in JOBS at the last refresh
	added   map[job.Kind]int64   // accepted here since that refresh
	workers map[string]workerSeen
}

type workerSeen struct {
	kind        job.Kind
	concurrency int
	at          time.Time
}

// priors stand in until a kind's first job has been timed.
var priors = map[job.Kind]float64{job.Scan: 3, job.Sitemap: 60, job.Email: 2}

const (
	ewmaWeight = 0.2
	workerTTL  = 10 * time.Second
)

func newEstimator() *estimator {
	return &estimator{
		avg:     map[job.Kind]float64{},
		depth:   map[job.Kind]int64{},
		added:   map[job.Kind]int64{},
		workers: map[string]workerSeen{},
	}
}

// observe feeds one job's processing time.
func (e *estimator) observe(k job.Kind, d time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := d.Seconds()
	if old, ok := e.avg[k]; ok {
		e.avg[k] = old + ewmaWeight*(s-old)
	} else {
		e.avg[k] = s
	}
}

// setDepth records the queue depth read from the stream.
func (e *estimator) setDepth(k job.Kind, n int64) {
	e.mu.Lock()
	e.depth[k], e.added[k] = n, 0
	e.mu.Unlock()
}

// worker records a worker's heartbeat (its JSON announcement).
func (e *estimator) worker(data []byte, now time.Time) {
	var beat struct {
		ID          string   `json:"id"`
		Kind        job.Kind `json:"kind"`
		Concurrency int      `json:"concurrency"`
	}
	if json.Unmarshal(data, &beat) != nil || beat.ID == "" || !beat.Kind.Valid() {
		return
	}
	e.mu.Lock()
	e.workers[beat.ID] = workerSeen{kind: beat.Kind, concurrency: beat.Concurrency, at: now}
	e.mu.Unlock()
}

// accepted counts n new jobs and returns the estimate for the last of
// them: the jobs ahead are processed capacity at a time.
func (e *estimator) accepted(k job.Kind, n int, now time.Time) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	ahead := e.depth[k] + e.added[k]
	e.added[k] += int64(n)
	return e.estimateLocked(k, ahead+int64(n)-1, now)
}

// estimate is the time for a job with ahead jobs before it.
func (e *estimator) estimate(k job.Kind, ahead int64, now time.Time) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.estimateLocked(k, ahead, now)
}

func (e *estimator) estimateLocked(k job.Kind, ahead int64, now time.Time) int {
	avg, ok := e.avg[k]
	if !ok {
		avg = priors[k]
	}
	capacity := e.capacityLocked(k, now)
	if capacity < 1 {
		capacity = 1 // no worker seen: count one, the job waits for it
	}
	rounds := 1 + ahead/int64(capacity)
	return int(math.Ceil(avg * float64(rounds)))
}

func (e *estimator) capacityLocked(k job.Kind, now time.Time) int {
	total := 0
	for id, w := range e.workers {
		if now.Sub(w.at) > workerTTL {
			delete(e.workers, id)
			continue
		}
		if w.kind == k {
			total += w.concurrency
		}
	}
	return total
}

// snapshot reports depth and capacity per kind, for /metrics.
func (e *estimator) snapshot(now time.Time) (depth, capacity map[string]float64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	depth, capacity = map[string]float64{}, map[string]float64{}
	for _, k := range job.Kinds {
		depth[string(k)] = float64(e.depth[k] + e.added[k])
		capacity[string(k)] = float64(e.capacityLocked(k, now))
	}
	return depth, capacity
}
