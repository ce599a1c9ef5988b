// Package jobstore keeps where each job is once a worker has taken it: its
// current document in the JOB_STATUS bucket (small: no result) and its
// final document, result included, once in the RESULTS stream. Workers
// write it; ingest reads it. A job still waiting in JOBS has neither: ingest
// answers for it from memory.
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

// Store reads and writes job documents.
type Store struct {
	js jetstream.JetStream
	kv jetstream.KeyValue
}

// Open binds to the bucket and stream that bus.Setup declared.
func Open(ctx context.Context, js jetstream.JetStream) (*Store, error) {
	kv, err := js.KeyValue(ctx, bus.StatusBucket)
	if err != nil {
		return nil, fmt.Errorf("status bucket: %w", err)
	}
	return &Store{js: js, kv: kv}, nil
}

// KV is the status bucket, for watchers.
func (s *Store) KV() jetstream.KeyValue { return s.kv }

// Status returns the job's current document, without its result.
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

// Get returns the job as GET shows it: the final document with its result
// once the job has ended, the current status document before.
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

// Final returns the document published to RESULTS when the job ended.
func (s *Store) Final(ctx context.Context, k job.Kind, id string) (*job.Job, error) {
	stream, err := s.js.Stream(ctx, bus.ResultsStream)
	if err != nil {
		return nil, err
	}
	msg, err := stream.GetLastMsgForSubject(ctx, bus.ResultSubject(k, id))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return decode(msg.Data)
}

// Put stores the job's current document. The result is left out: it is
// stored once, in RESULTS, by Finish.
func (s *Store) Put(ctx context.Context, j *job.Job) error {
	c := *j
	c.Result = nil
	_, err := s.kv.Put(ctx, j.ID, c.AppendJSON(nil))
	return err
}

// Finish publishes the final document to results.<kind>.<id> and then
// records the final status. The result is stored before the status says
// so, and both before the worker acknowledges the job.
func (s *Store) Finish(ctx context.Context, j *job.Job) error {
	m := nats.NewMsg(bus.ResultSubject(j.Kind, j.ID))
	m.Data = j.AppendJSON(nil)
	if _, err := s.js.PublishMsg(ctx, m, jetstream.WithMsgID(j.ID+"."+string(j.Status))); err != nil {
		return fmt.Errorf("publish result: %w", err)
	}
	return s.Put(ctx, j)
}

func decode(b []byte) (*job.Job, error) {
	var j job.Job
	if err := j.UnmarshalJSON(b); err != nil {
		return nil, fmt.Errorf("job document: %w", err)
	}
	return &j, nil
}
