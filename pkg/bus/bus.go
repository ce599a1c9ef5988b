// Package bus owns Surveyor's wire: it connects processes to NATS
// JetStream, declares the streams and buckets they meet through, names
// every subject (subjects.go), stores batches of messages with one
// acknowledgement (batch.go), reads a stream by sequence (direct.go) and
// carries ingest's accept announcements (accepted.go). Every process runs
// Setup at start; it is idempotent, so replicas and restarts converge on
// one layout.
package bus

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/surveyor/surveyor/pkg/job"
)

// Names of the streams and buckets of contract §5.
const (
	JobsStream       = "JOBS"
	ResultsStream    = "RESULTS"
	DeadLetterStream = "DEADLETTER"
	// StatusBucket holds each job's current document, without its result
	// (the result lives once, in RESULTS).
	StatusBucket = "JOB_STATUS"
	// StatusStream is the stream behind StatusBucket.
	StatusStream = "KV_" + StatusBucket
	// TechnologiesBucket holds the custom fingerprints of /technologies.
	TechnologiesBucket = "TECHNOLOGIES"
)

// MaxPayload is the largest message Surveyor publishes: a 10,000-page
// sitemap result is well over NATS's 1 MiB default.
const MaxPayload = 8 << 20

// Config is the part of the contract's configuration that shapes streams.
type Config struct {
	Replicas     int           // STREAM_REPLICAS
	ResultTTL    time.Duration // RESULT_TTL: RESULTS and job status age
	JobsMaxMsgs  int64         // JOBS_MAX_MSGS: queued jobs before 429
	JobsMaxBytes int64         // JOBS_MAX_BYTES
}

// ConsumerName is the durable pull consumer every replica of a kind shares.
func ConsumerName(k job.Kind) string { return string(k) + "-workers" }

// Connect dials NATS and keeps reconnecting forever. Publishes made while
// disconnected fail at once instead of being buffered, so ingest can answer
// 503 rather than 200 for a job that was never stored.
func Connect(urls, name string, opts ...nats.Option) (*nats.Conn, error) {
	base := []nats.Option{
		nats.Name(name),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250 * time.Millisecond),
		nats.ReconnectBufSize(-1),
		nats.RetryOnFailedConnect(true),
		nats.Timeout(2 * time.Second),
	}
	return nats.Connect(urls, append(base, opts...)...)
}

// Setup creates or updates every stream and bucket.
func Setup(ctx context.Context, js jetstream.JetStream, cfg Config) error {
	if cfg.Replicas < 1 {
		cfg.Replicas = 1
	}
	subjects := make([]string, 0, len(job.Kinds))
	for _, k := range job.Kinds {
		subjects = append(subjects, JobSubject(k))
	}
	streams := []jetstream.StreamConfig{{
		Name:        JobsStream,
		Description: "queued jobs, one work-queue message per job",
		Subjects:    subjects,
		Retention:   jetstream.WorkQueuePolicy,
		// DiscardNew: a full queue refuses new jobs (ingest answers 429)
		// instead of silently deleting the oldest accepted ones.
		Discard:    jetstream.DiscardNew,
		MaxMsgs:    orUnlimited(cfg.JobsMaxMsgs),
		MaxBytes:   orUnlimited(cfg.JobsMaxBytes),
		MaxMsgSize: MaxPayload,
		Storage:    jetstream.FileStorage,
		Replicas:   cfg.Replicas,
		Duplicates: 2 * time.Minute,
		// Ingest stores the jobs of concurrent requests as one batch:
		// one acknowledgement for many jobs.
		AllowBatchPublish: true,
		// Ingest reads the waiting jobs by sequence at start (a work
		// queue cannot be browsed with a consumer).
		AllowDirect: true,
	}, {
		Name:        ResultsStream,
		Description: "final job documents; subscribe to results.>",
		Subjects:    []string{AllResultsSubject},
		Retention:   jetstream.LimitsPolicy,
		MaxAge:      cfg.ResultTTL,
		MaxMsgSize:  MaxPayload,
		Storage:     jetstream.FileStorage,
		Replicas:    cfg.Replicas,
		Duplicates:  2 * time.Minute,
		AllowDirect: true,
	}, {
		Name:        DeadLetterStream,
		Description: "jobs that failed every delivery, with their last error",
		Subjects:    []string{AllDeadLettersSubject},
		Retention:   jetstream.LimitsPolicy,
		MaxAge:      cfg.ResultTTL,
		MaxMsgSize:  MaxPayload,
		Storage:     jetstream.FileStorage,
		Replicas:    cfg.Replicas,
	}}
	for _, sc := range streams {
		if _, err := js.CreateOrUpdateStream(ctx, sc); err != nil {
			return fmt.Errorf("stream %s: %w", sc.Name, err)
		}
	}
	buckets := []jetstream.KeyValueConfig{{
		Bucket:       StatusBucket,
		Description:  "current document of every job, by id",
		History:      1,
		TTL:          cfg.ResultTTL,
		MaxValueSize: MaxPayload,
		Storage:      jetstream.FileStorage,
		Replicas:     cfg.Replicas,
	}, {
		Bucket:       TechnologiesBucket,
		Description:  "custom technology fingerprints, by slug",
		History:      5,
		MaxValueSize: 1 << 20,
		Storage:      jetstream.FileStorage,
		Replicas:     cfg.Replicas,
	}}
	for _, kc := range buckets {
		if _, err := js.CreateOrUpdateKeyValue(ctx, kc); err != nil {
			return fmt.Errorf("bucket %s: %w", kc.Bucket, err)
		}
	}
	return nil
}

func orUnlimited(n int64) int64 {
	if n <= 0 {
		return -1
	}
	return n
}

// IsQueueFull reports whether a publish failed because JOBS hit one of its
// limits: with DiscardNew the server refuses the message with API error
// 10077 and "maximum messages exceeded" or "maximum bytes exceeded".
func IsQueueFull(err error) bool {
	var apiErr *jetstream.APIError
	if !errors.As(err, &apiErr) || apiErr.ErrorCode != 10077 {
		return false
	}
	return strings.Contains(apiErr.Description, "maximum")
}
