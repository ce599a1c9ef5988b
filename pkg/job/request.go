package job

import (
	"strconv"
	"strings"
)

// Request is one job asked for, in canonical form: what ingest makes of a
// POST body, and what the job document then carries.
type Request struct {
	Kind     Kind
	URL      string   // ParseTarget's form (scan, sitemap)
	Email    string   // NormalizeEmail's form (email)
	Options  []string // CanonicalOptions's form (scan)
	MaxPages int      // 1..MaxMaxPages (sitemap)
	Force    bool
}

// Key identifies requests that may share one job: same kind, target and
// parameters. Force is not part of it: it only says whether to share.
func (r Request) Key() string {
	switch r.Kind {
	case Scan:
		return "scan|" + r.URL + "|" + strings.Join(r.Options, ",")
	case Sitemap:
		return "sitemap|" + r.URL + "|" + strconv.Itoa(r.MaxPages)
	default:
		return "email|" + r.Email
	}
}

// KeyOf is Key for a job document.
func KeyOf(j *Job) string {
	return Request{Kind: j.Kind, URL: j.URL, Email: j.Email, Options: j.Options, MaxPages: j.MaxPages}.Key()
}
