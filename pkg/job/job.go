package job

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

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

// jobFields is Job without its methods, so UnmarshalJSON can reuse the
// default decoding for everything but the id.
type jobFields Job

// MarshalJSON writes the document with the id under the kind's field name.
// Callers that encode many documents use AppendJSON: json.Marshal validates
// and compacts whatever a MarshalJSON returns, result included, once more.
func (j Job) MarshalJSON() ([]byte, error) { return j.AppendJSON(nil), nil }

// AppendJSON appends the document to b: the fields in declaration order, the
// id first under the kind's field name, empty optional fields left out,
// strings and times as encoding/json writes them. It uses no reflection:
// every job is encoded several times on its way (queued, running, its
// events, its final document). Progress and Result are copied as they are,
// so they must hold valid JSON; they are made by json.Marshal.
func (j *Job) AppendJSON(b []byte) []byte {
	b = append(b, `{"`...)
	b = append(b, j.Kind.IDField()...)
	b = append(b, `":`...)
	b = appendString(b, j.ID)
	b = append(b, `,"kind":`...)
	b = appendString(b, string(j.Kind))
	b = append(b, `,"status":`...)
	b = appendString(b, string(j.Status))
	if j.URL != "" {
		b = append(b, `,"url":`...)
		b = appendString(b, j.URL)
	}
	if j.Email != "" {
		b = append(b, `,"email":`...)
		b = appendString(b, j.Email)
	}
	if len(j.Options) > 0 {
		b = append(b, `,"options":[`...)
		for i, o := range j.Options {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, o)
		}
		b = append(b, ']')
	}
	if j.MaxPages != 0 {
		b = append(b, `,"max_pages":`...)
		b = strconv.AppendInt(b, int64(j.MaxPages), 10)
	}
	b = append(b, `,"force":`...)
	b = strconv.AppendBool(b, j.Force)
	b = append(b, `,"created_at":`...)
	b = appendTime(b, j.Created)
	if j.Started != nil {
		b = append(b, `,"started_at":`...)
		b = appendTime(b, *j.Started)
	}
	if j.Finished != nil {
		b = append(b, `,"finished_at":`...)
		b = appendTime(b, *j.Finished)
	}
	b = append(b, `,"attempts":`...)
	b = strconv.AppendInt(b, int64(j.Attempts), 10)
	if len(j.Progress) > 0 {
		b = append(b, `,"progress":`...)
		b = append(b, j.Progress...)
	}
	if j.Error != "" {
		b = append(b, `,"error":`...)
		b = appendString(b, j.Error)
	}
	if len(j.Result) > 0 {
		b = append(b, `,"result":`...)
		b = append(b, j.Result...)
	}
	return append(b, '}')
}

// appendString quotes s as encoding/json does. Strings that need escaping
// (rare: URLs are normalized, errors are plain text) are left to
// encoding/json itself.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// appendTime writes t as time.Time's MarshalJSON does (RFC 3339 with
// nanoseconds, trailing zeros dropped).
func appendTime(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}

// UnmarshalJSON reads a document written by MarshalJSON, in one pass: the
// three possible id fields sit beside the promoted document fields. Code
// that decodes many documents calls it directly: json.Unmarshal would
// check the whole document once more before calling it.
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
