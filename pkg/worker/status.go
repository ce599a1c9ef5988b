package worker

import (
	"context"
	"log/slog"

	"github.com/nats-io/nats.go"

	"github.com/surveyor/surveyor/pkg/bus"
	"github.com/surveyor/surveyor/pkg/job"
	"github.com/surveyor/surveyor/pkg/jobstore"
)

// recorder is the one place a worker writes a job's status: every change of
// status is stored and then announced on bus.EventSubject, with the one
// encoding the store made; progress is only stored.
type recorder struct {
	store *jobstore.Store
	nc    *nats.Conn
	log   *slog.Logger
}

// record stores j as the job's current status and announces it.
func (r *recorder) record(ctx context.Context, j *job.Job) error {
	doc, err := r.store.Put(ctx, j)
	if err != nil {
		return err
	}
	r.event(j, doc)
	return nil
}

// finish stores j's final document (RESULTS, then the status) and
// announces it.
func (r *recorder) finish(ctx context.Context, j *job.Job) error {
	doc, err := r.store.Finish(ctx, j)
	if err != nil {
		return err
	}
	r.event(j, doc)
	return nil
}

// deadLetter stores j's final failed document (DEADLETTER, RESULTS, then
// the status) and announces it.
func (r *recorder) deadLetter(ctx context.Context, j *job.Job) error {
	doc, err := r.store.DeadLetter(ctx, j)
	if err != nil {
		return err
	}
	r.event(j, doc)
	return nil
}

// progress stores a running job's progress. It is no change of status, so
// nothing is announced.
func (r *recorder) progress(ctx context.Context, j *job.Job) error {
	_, err := r.store.Put(ctx, j)
	return err
}

// event announces the job's new status with doc, its status document as
// stored (no result): ingest needs the request key, the status and the
// start and finish times. A lost event only makes a repeat start a new job
// or see an older status; the status bucket stays the truth.
func (r *recorder) event(j *job.Job, doc []byte) {
	if err := r.nc.Publish(bus.EventSubject(j.Kind), doc); err != nil {
		r.log.Debug("cannot announce status", "job_id", j.ID, "err", err)
	}
}
