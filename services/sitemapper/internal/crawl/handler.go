// Package crawl is the sitemapper's crawler. Handler takes a sitemap job,
// crawls the site of its URL through the safe dialer and returns the
// job.SitemapResult of contract §4.
//
// Decisions a user of the result may want to know:
//
//   - Scope is the start origin, its www. twin, and their https forms once
//     the site redirects to https. Other hosts, ports and IP aliases are
//     counted in excluded.out_of_scope and never fetched.
//   - max_pages bounds the listed pages; every listed page was fetched.
//     Redirects are not listed: their target is, with redirected_from. A
//     chain that loops or passes 10 hops is listed once, under its first
//     URL, with an error.
//   - 4xx, 5xx and failed fetches are listed with their status (0 when no
//     response came) and error, and counted in excluded.errors. 429 and 503
//     are retried twice after Retry-After (default 5s, at most 60s), with
//     the whole origin paused meanwhile.
//   - Pages only a sitemap lists are fetched after the linked ones, have
//     source "sitemap" and depth 1; one that a link reaches later becomes
//     source "link".
//   - Crawl-delay (at most 60s honoured) makes an origin sequential.
//   - robots.txt: see package robots. Disallowed URLs are counted in
//     excluded.robots and never fetched, sitemap entries included.
//   - Traps (excluded.traps): depth over SITEMAPPER_MAX_DEPTH, URLs over
//     2048 bytes, a path segment repeated 4 times or over 32 segments, more
//     than 16 query parameters, one parameter 3 times or a 1 KiB query.
//     Session-id parameters are removed by normalization.
//   - A page's body is read up to SITEMAPPER_BODY_LIMIT; the links before
//     the cut count (body_truncated is set).
//
// One goroutine (the coordinator, crawl.run) owns all crawl state: the
// frontier, the seen set, the result. Fetches run in their own goroutines
// and send back what they found, already parsed and normalized, so the
// coordinator only does map lookups and scheduling and needs no locks.
package crawl

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"

	"github.com/surveyor/surveyor/pkg/job"
	"github.com/surveyor/surveyor/pkg/netguard"
	"github.com/surveyor/surveyor/pkg/resolver"
	"github.com/surveyor/surveyor/pkg/worker"
	"github.com/surveyor/surveyor/services/sitemapper/internal/normalize"
)

// Dialer opens connections; *netguard.Dialer is the one to use.
type Dialer interface {
	DialContext(ctx context.Context, network, address string) (net.Conn, error)
}

// Handler crawls sitemap jobs. It is safe for concurrent use: every job
// gets its own HTTP transport, so per-host limits hold per crawl.
type Handler struct {
	cfg  Config
	dial Dialer
	// TLSClientConfig is used for https; nil verifies against the system
	// roots. Tests set their own CA here.
	TLSClientConfig *tls.Config
}

// New returns a Handler. A nil d dials through netguard with the resolver
// of cfg.DNSServer and the policy of cfg.Targets.
func New(cfg Config, d Dialer) *Handler {
	if d == nil {
		d = &netguard.Dialer{Resolver: resolver.New(cfg.DNSServer), Policy: cfg.Targets, Timeout: cfg.Timeout}
	}
	return &Handler{cfg: cfg, dial: d}
}

// Handle crawls j.URL up to j.MaxPages fetched pages and returns a
// *job.SitemapResult. A start URL that is refused (not a public address) or
// whose host does not exist fails the job permanently. When the job budget
// runs out the pages found so far are the result (timed_out is set); when
// ctx itself ends (the worker stops) the error is returned so the job is
// delivered again.
func (h *Handler) Handle(ctx context.Context, j *job.Job, p worker.Progress) (any, error) {
	// The start URL takes the crawl's spelling (escapes in one form, session
	// ids dropped), so that links back to it are known.
	start, err := normalize.Parse(j.URL, nil)
	if err != nil {
		return nil, worker.Permanent(fmt.Errorf("sitemap: bad start URL %q: %w", j.URL, err))
	}
	budget, cancel := context.WithTimeout(ctx, h.cfg.JobBudget)
	defer cancel()
	c := newCrawl(h, start, j.MaxPages, p) // ingest gave it a value in bounds
	defer c.client.CloseIdleConnections()
	res, err := c.run(budget)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil {
		return nil, err
	}
	return res, nil
}
