package worker

import (
	"context"
	"log/slog"

	"github.com/nats-io/nats.go"

	"github.com/surveyor/surveyor/pkg/job"
	"github.com/surveyor/surveyor/pkg/jobstore"
)

// EventsSubject prefixes the subjects on which workers announce every status
// change of a job (core NATS, not persisted): EventSubject(kind). Ingest
// follows them to keep its de-duplication index and processing-time
// estimates current without decoding every status write.
const EventsSubject = "surveyor.events"

// EventSubject is the events subject of one kind.
func EventSubject(k job.Kind) string { return EventsSubject + "." + string(k) }

// recorder is the one place a worker writes a job's status: every change of
// status is stored and then announced on the events subject; progress is
// only stored.
type recorder struct {
	store *jobstore.Store
	nc    *nats.Conn
	log   *slog.Logger
}

// record stores j as the job's current status and announces it.
func (r *recorder) record(ctx context.Context, j *job.Job) error {
	if err := r.store.Put(ctx, j); err != nil {
		return err
	}
	r.event(j)
	return nil
}

// finish stores j's final document (RESULTS, then the status) and
// announces it.
func (r *recorder) finish(ctx context.Context, j *job.Job) error {
	if err := r.store.Finish(ctx, j); err != nil {
		return err
	}
	r.event(j)
	return nil
}

// progress stores a running job's progress. It is no change of status, so
// nothing is announced.
func (r *recorder) progress(ctx context.Context, j *job.Job) error {
	return r.store.Put(ctx, j)
}

// event announces the job's new status. The message is its status document
// (no result, no progress): ingest needs the request key, the status and
// the start and finish times. A lost event only makes a repeat start a new
// job or see an older status; the status bucket stays the truth.
func (r *recorder) event(j *job.Job) {
	c := *j
	c.Result, c.Progress = nil, nil
	if err := r.nc.Publish(EventSubject(j.Kind), c.AppendJSON(nil)); err != nil {
		r.log.Debug("cannot announce status", "job_id", j.ID, "err", err)
	}
}
