package worker

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"github.com/surveyor/surveyor/pkg/job"
)

// progressEvery is the most often a job's progress is stored.
const progressEvery = time.Second

// reportProgress gives the handler a Progress that stores the job's
// progress at most once per interval, the last report always included, and
// that stores nothing once the handler has returned: the final status must
// not be overwritten by a late progress write.
func reportProgress(rec *recorder, every time.Duration, log *slog.Logger) Middleware {
	return func(next Handler) Handler {
		return HandlerFunc(func(ctx context.Context, j *job.Job, _ Progress) (any, error) {
			p := &progress{rec: rec, every: every, job: *j, log: jobLog(log, j)}
			defer p.stop()
			return next.Handle(ctx, j, p)
		})
	}
}

// progress is the throttled Progress of one attempt.
type progress struct {
	rec   *recorder
	every time.Duration
	log   *slog.Logger

	mu      sync.Mutex
	job     job.Job // the running status, with the last progress stored
	last    time.Time
	pending json.RawMessage
	timer   *time.Timer
	stopped bool
}

// Report keeps v as the latest progress and stores it when the interval
// allows.
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
	if wait := p.every - time.Since(p.last); wait > 0 {
		if p.timer == nil {
			p.timer = time.AfterFunc(wait, p.flush)
		}
		return
	}
	p.flushLocked()
}

// flush stores the latest progress when the interval has passed.
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
	if err := p.rec.progress(ctx, &p.job); err != nil {
		p.log.Warn("cannot store progress", "err", err)
	}
}

// stop ends storing; a write under way finishes first.
func (p *progress) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopped = true
	if p.timer != nil {
		p.timer.Stop()
	}
}
