// Package jobstore keeps where each job is once a worker has taken it: its
// current document in the JOB_STATUS bucket (small: no result) and its
// final document, result included, once in the RESULTS stream (and in
// DEADLETTER when it failed for good). Workers write it; ingest reads it. A
// job still waiting in JOBS has neither: ingest answers for it from memory.
package jobstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/surveyor/surveyor/pkg/bus"
	"github.com/surveyor/surveyor/pkg/job"
)

// ErrNotFound means no job has that id (or it expired).
var ErrNotFound = errors.New("job not found")

// Store reads and writes job documents. Each read is one request to the
// server: the handles on the bucket and on RESULTS are looked up once.
type Store struct {
	js      jetstream.JetStream
	kv      jetstream.KeyValue
	results jetstream.Stream
}

// Open binds to the bucket and stream that bus.Setup declared.
func Open(ctx context.Context, js jetstream.JetStream) (*Store, error) {
	kv, err := js.KeyValue(ctx, bus.StatusBucket)
	if err != nil {
		return nil, fmt.Errorf("status bucket: %w", err)
	}
	results, err := js.Stream(ctx, bus.ResultsStream)
	if err != nil {
		return nil, fmt.Errorf("results stream: %w", err)
	}
	return &Store{js: js, kv: kv, results: results}, nil
}

// KV is the status bucket, for watchers.
func (s *Store) KV() jetstream.KeyValue { return s.kv }

// Status returns the job's current document, without its result: one
// direct get on the bucket.
func (s *Store) Status(ctx context.Context, id string) (*job.Job, error) {
	e, err := s.kv.Get(ctx, id)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return decode(e.Value())
}

// Get returns the job as GET shows it, for a caller that knows nothing of
// it: the final document with its result once the job has ended (two
// requests), the current status document before (one).
func (s *Store) Get(ctx context.Context, id string) (*job.Job, error) {
	j, err := s.Status(ctx, id)
	if err != nil || !j.Status.Finished() {
		return j, err
	}
	final, err := s.Final(ctx, j.Kind, id)
	if errors.Is(err, ErrNotFound) {
		return j, nil // the result aged out of RESULTS before the status did
	}
	return final, err
}

// Final returns the document published to RESULTS when the job ended: one
// direct get of results.<kind>.<id>.
func (s *Store) Final(ctx context.Context, k job.Kind, id string) (*job.Job, error) {
	msg, err := s.results.GetLastMsgForSubject(ctx, bus.ResultSubject(k, id))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return decode(msg.Data)
}

// Put stores the job's current document and returns it, for a worker to
// announce the same bytes (its status event) without encoding them again.
// The result is left out: it is stored once, in RESULTS, by Finish.
func (s *Store) Put(ctx context.Context, j *job.Job) ([]byte, error) {
	doc := statusDoc(j)
	if _, err := s.kv.Put(ctx, j.ID, doc); err != nil {
		return nil, err
	}
	return doc, nil
}

// Finish publishes the final document to results.<kind>.<id>, then stores
// the final status, and returns the status document as Put does. The
// result is stored before the status says so, and both before the worker
// acknowledges the job. The document is encoded once: the final document
// is the status document with the result added.
func (s *Store) Finish(ctx context.Context, j *job.Job) ([]byte, error) {
	doc := statusDoc(j)
	return doc, s.finish(ctx, j, doc)
}

// DeadLetter ends a job that failed for good: its final document goes to
// deadletter.<kind> first, then is stored as Finish stores it. A failed job
// has no result, so one encoding serves DEADLETTER, RESULTS and the status.
func (s *Store) DeadLetter(ctx context.Context, j *job.Job) ([]byte, error) {
	doc := statusDoc(j)
	m := nats.NewMsg(bus.DeadLetterSubject(j.Kind))
	m.Data = doc
	m.Header.Set(bus.JobIDHeader, j.ID)
	if _, err := s.js.PublishMsg(ctx, m, jetstream.WithMsgID("dead."+j.ID)); err != nil {
		return nil, fmt.Errorf("dead-letter: %w", err)
	}
	return doc, s.finish(ctx, j, doc)
}

// finish publishes the final document and then stores doc, the status.
func (s *Store) finish(ctx context.Context, j *job.Job, doc []byte) error {
	m := nats.NewMsg(bus.ResultSubject(j.Kind, j.ID))
	m.Data = withResult(doc, j)
	if _, err := s.js.PublishMsg(ctx, m, jetstream.WithMsgID(j.ID+"."+string(j.Status))); err != nil {
		return fmt.Errorf("publish result: %w", err)
	}
	_, err := s.kv.Put(ctx, j.ID, doc)
	return err
}

// statusDoc encodes the job without its result.
func statusDoc(j *job.Job) []byte {
	c := *j
	c.Result = nil
	return c.AppendJSON(make([]byte, 0, 384))
}

// withResult returns the final document of j from its status document:
// the result is the document's last field, so it goes before the closing
// brace. The status document is left as it was.
func withResult(doc []byte, j *job.Job) []byte {
	if len(j.Result) == 0 {
		return doc
	}
	b := make([]byte, 0, len(doc)+len(j.Result)+len(`,"result":`))
	b = append(b, doc[:len(doc)-1]...)
	b = append(b, `,"result":`...)
	b = append(b, j.Result...)
	return append(b, '}')
}

func decode(b []byte) (*job.Job, error) {
	var j job.Job
	if err := j.UnmarshalJSON(b); err != nil {
		return nil, fmt.Errorf("job document: %w", err)
	}
	return &j, nil
}
