package api

import (
	"github.com/surveyor/surveyor/pkg/job"
	"github.com/surveyor/surveyor/services/ingest/internal/intake"
	"github.com/surveyor/surveyor/services/ingest/internal/validate"
)

// The answers to the five POSTs (contract §3). Their fields are in the
// alphabetical order ingest has always written them in.

// ScanLaunch answers POST /v1/scan.
type ScanLaunch struct {
	Deduplicated bool       `json:"deduplicated"`
	ETA          int        `json:"estimated_time_seconds" schema:"minimum=0"`
	ScanID       string     `json:"scan_id" schema:"format=uuid"`
	Status       job.Status `json:"status"`
	URL          string     `json:"url"`
}

// ScansLaunch answers POST /v1/scans: one entry per URL, in order.
type ScansLaunch struct {
	ETA   int               `json:"estimated_time_seconds" schema:"minimum=0"`
	Scans []ScansLaunchItem `json:"scans"`
}

// ScansLaunchItem is one entry of ScansLaunch.
type ScansLaunchItem struct {
	ScanID string `json:"scan_id" schema:"format=uuid"`
	URL    string `json:"url"`
}

// SitemapLaunch answers POST /v1/sitemap.
type SitemapLaunch struct {
	Deduplicated bool       `json:"deduplicated"`
	ETA          int        `json:"estimated_time_seconds" schema:"minimum=0"`
	MaxPages     int        `json:"max_pages"`
	SitemapID    string     `json:"sitemap_id" schema:"format=uuid"`
	Status       job.Status `json:"status"`
	URL          string     `json:"url"`
}

// EmailLaunch answers POST /v1/email/validate.
type EmailLaunch struct {
	Deduplicated bool       `json:"deduplicated"`
	Email        string     `json:"email"`
	ETA          int        `json:"estimated_time_seconds" schema:"minimum=0"`
	JobID        string     `json:"job_id" schema:"format=uuid"`
	Status       job.Status `json:"status"`
}

// EmailsLaunch answers POST /v1/emails/validate: one entry per address,
// in order.
type EmailsLaunch struct {
	ETA  int                `json:"estimated_time_seconds" schema:"minimum=0"`
	Jobs []EmailsLaunchItem `json:"jobs"`
}

// EmailsLaunchItem is one entry of EmailsLaunch.
type EmailsLaunchItem struct {
	Email string `json:"email"`
	JobID string `json:"job_id" schema:"format=uuid"`
}

// launchResponse is the answer to a POST of endpoint e.
func launchResponse(e validate.Endpoint, reqs []job.Request, outs []intake.Outcome, eta int) any {
	o := outs[0]
	switch e {
	case validate.ScanOne:
		return ScanLaunch{Deduplicated: o.Deduplicated, ETA: etaFor(o, eta), ScanID: o.ID, Status: o.Status, URL: reqs[0].URL}
	case validate.SitemapOne:
		return SitemapLaunch{Deduplicated: o.Deduplicated, ETA: etaFor(o, eta), MaxPages: reqs[0].MaxPages,
			SitemapID: o.ID, Status: o.Status, URL: reqs[0].URL}
	case validate.EmailOne:
		return EmailLaunch{Deduplicated: o.Deduplicated, Email: reqs[0].Email, ETA: etaFor(o, eta), JobID: o.ID, Status: o.Status}
	case validate.ScanMany:
		items := make([]ScansLaunchItem, len(outs))
		for i, o := range outs {
			items[i] = ScansLaunchItem{ScanID: o.ID, URL: reqs[i].URL}
		}
		return ScansLaunch{ETA: eta, Scans: items}
	default:
		items := make([]EmailsLaunchItem, len(outs))
		for i, o := range outs {
			items[i] = EmailsLaunchItem{Email: reqs[i].Email, JobID: o.ID}
		}
		return EmailsLaunch{ETA: eta, Jobs: items}
	}
}

// etaFor is the estimate of one job: none left for a finished one.
func etaFor(o intake.Outcome, eta int) int {
	if o.Status.Finished() {
		return 0
	}
	return eta
}
