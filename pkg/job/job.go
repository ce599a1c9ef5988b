// Package job defines the job document that travels through Surveyor: ingest
// publishes it to the JOBS stream, workers update its status, and the final
// document is published to the RESULTS stream and served by GET.
package job

import (
	"encoding/json"
	"fmt"
	"time"
)

// Kind names what a job does. It is also the last token of its subjects:
// jobs.<kind>, results.<kind>.<id>, deadletter.<kind>.
type Kind string

const (
	Scan    Kind = "scan"
	Sitemap Kind = "sitemap"
	Email   Kind = "email"
)

// Kinds lists every job kind, in a stable order.
var Kinds = []Kind{Scan, Sitemap, Email}

// Valid reports whether k is one of Kinds.
func (k Kind) Valid() bool { return k == Scan || k == Sitemap || k == Email }

// IDField is the name the job's id carries in JSON documents for this kind.
func (k Kind) IDField() string {
	switch k {
	case Scan:
		return "scan_id"
	case Sitemap:
		return "sitemap_id"
	default:
		return "job_id"
	}
}

// Status is where a job is in its life.
type Status string

const (
	Queued    Status = "queued"
	Running   Status = "running"
	Completed Status = "completed"
	Failed    Status = "failed"
)

// Finished reports whether the job will not change any more.
func (s Status) Finished() bool { return s == Completed || s == Failed }

// Job is the job document of the contract (§4). The id is written under the
// kind's own field name (scan_id, sitemap_id or job_id).
type Job struct {
	ID       string          `json:"-"`
	Kind     Kind            `json:"kind"`
	Status   Status          `json:"status"`
	URL      string          `json:"url,omitempty"`
	Email    string          `json:"email,omitempty"`
	Options  []string        `json:"options,omitempty"`
	MaxPages int             `json:"max_pages,omitempty"`
	Force    bool            `json:"force"`
	Created  time.Time       `json:"created_at"`
	Started  *time.Time      `json:"started_at,omitempty"`
	Finished *time.Time      `json:"finished_at,omitempty"`
	Attempts int             `json:"attempts"`
	Progress json.RawMessage `json:"progress,omitempty"`
	Error    string          `json:"error,omitempty"`
	Result   json.RawMessage `json:"result,omitempty"`
}

// jobFields is Job without its methods, so MarshalJSON can reuse the default
// encoding for everything but the id.
type jobFields Job

// MarshalJSON writes the document with the id under the kind's field name.
func (j Job) MarshalJSON() ([]byte, error) {
	body, err := json.Marshal(jobFields(j))
	if err != nil {
		return nil, err
	}
	id, _ := json.Marshal(j.ID)
	out := make([]byte, 0, len(body)+len(id)+16)
	out = append(out, '{', '"')
	out = append(out, j.Kind.IDField()...)
	out = append(out, '"', ':')
	out = append(out, id...)
	if len(body) > 2 {
		out = append(out, ',')
	}
	return append(out, body[1:]...), nil
}

// UnmarshalJSON reads a document written by MarshalJSON, in one pass: the
// three possible id fields sit beside the promoted document fields.
func (j *Job) UnmarshalJSON(b []byte) error {
	var w struct {
		jobFields
		ScanID    string `json:"scan_id"`
		SitemapID string `json:"sitemap_id"`
		JobID     string `json:"job_id"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*j = Job(w.jobFields)
	switch j.Kind {
	case Scan:
		j.ID = w.ScanID
	case Sitemap:
		j.ID = w.SitemapID
	case Email:
		j.ID = w.JobID
	default:
		return fmt.Errorf("job: unknown kind %q", j.Kind)
	}
	return nil
}

// Target is what the job looks at: its URL or its email address.
func (j *Job) Target() string {
	if j.Kind == Email {
		return j.Email
	}
	return j.URL
}

// JobSubject is the JOBS stream subject of a kind.
func JobSubject(k Kind) string { return "jobs." + string(k) }

// ResultSubject is the RESULTS stream subject of one job.
func ResultSubject(k Kind, id string) string { return "results." + string(k) + "." + id }

// DeadLetterSubject is the DEADLETTER stream subject of a kind.
func DeadLetterSubject(k Kind) string { return "deadletter." + string(k) }
