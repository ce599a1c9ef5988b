// Package verify combines syntax, DNS, SMTP and list checks into the email
// result of the contract (§4) and its verdict, and is the emailcheck
// worker's job handler.
package verify

import (
	"context"
	"crypto/rand"
	"fmt"
	"strings"
	"time"

	"github.com/surveyor/surveyor/pkg/job"
	"github.com/surveyor/surveyor/pkg/obs"
	"github.com/surveyor/surveyor/pkg/resolver"
	"github.com/surveyor/surveyor/pkg/worker"
	"github.com/surveyor/surveyor/services/emailcheck/internal/misc"
	"github.com/surveyor/surveyor/services/emailcheck/internal/mxlookup"
	"github.com/surveyor/surveyor/services/emailcheck/internal/smtpprobe"
	"github.com/surveyor/surveyor/services/emailcheck/internal/syntax"
	"github.com/surveyor/surveyor/services/emailcheck/internal/ttlcache"
)

// Cache sizes: enough for a day of a busy worker, bounded all the same.
const (
	maxCachedAddresses = 200_000
	maxCachedDomains   = 50_000
)

var (
	cacheHits = obs.Default.NewCounterVec("surveyor_email_cache_hits_total",
		"Validations answered from the per-address cache.").With()
	verdicts = obs.Default.NewCounterVec("surveyor_email_verdicts_total",
		"Validations by verdict.", "reachable")
)

// Handler validates addresses. It implements worker.Handler for email jobs
// and is safe for concurrent use.
type Handler struct {
	cfg      Config
	res      *resolver.Resolver
	lists    *misc.Lists
	prober   *smtpprobe.Prober
	results  *ttlcache.Cache[string, job.EmailResult]
	catchAll *ttlcache.Cache[string, bool]
}

var _ worker.Handler = (*Handler)(nil)

// NewHandler builds a Handler; Close it on shutdown.
func NewHandler(cfg Config) (*Handler, error) {
	lists, err := misc.Load(cfg.ListsDir)
	if err != nil {
		return nil, fmt.Errorf("EMAILCHECK_LISTS_DIR: %w", err)
	}
	res := resolver.New(cfg.DNSServer)
	helo, from := cfg.identity()
	prober, err := smtpprobe.New(smtpprobe.Options{
		Port: cfg.SMTPPort, HELO: helo, From: from, Targets: cfg.Targets, Proxy: cfg.Proxy,
		ConnectTimeout: cfg.ConnectTimeout, BannerTimeout: cfg.BannerTimeout,
		CommandTimeout: cfg.CommandTimeout, IdleTimeout: cfg.IdleTimeout,
		PerServer: cfg.PerServer, Resolver: res,
	})
	if err != nil {
		return nil, fmt.Errorf("SMTP_PROXY: %w", err)
	}
	return &Handler{
		cfg:      cfg,
		res:      res,
		lists:    lists,
		prober:   prober,
		results:  ttlcache.New[string, job.EmailResult](maxCachedAddresses),
		catchAll: ttlcache.New[string, bool](maxCachedDomains),
	}, nil
}

// Close hangs up pooled SMTP sessions.
func (h *Handler) Close() { h.prober.Close() }

// Handle validates j.Email. Bad input is a result (reachable "invalid"),
// not an error; a cancelled context is an error so the job is retried
// rather than stored as "unknown".
func (h *Handler) Handle(ctx context.Context, j *job.Job, p worker.Progress) (any, error) {
	if j.Kind != job.Email {
		return nil, worker.Permanent(fmt.Errorf("emailcheck: job kind %q", j.Kind))
	}
	if p != nil {
		p.Report(job.EmailProgress{Stage: "validating"})
	}
	r := h.Verify(ctx, j.Email, j.Force)
	if err := ctx.Err(); err != nil && r.Reachable == job.ReachableUnknown {
		return nil, err
	}
	return r, nil
}

// Verify validates one address. force skips the per-address cache.
func (h *Handler) Verify(ctx context.Context, addr string, force bool) job.EmailResult {
	r := job.EmailResult{Syntax: syntax.Parse(addr), DNS: job.EmailDNS{MX: []job.MX{}}}
	if !r.Syntax.Valid {
		r.Reachable = job.ReachableInvalid
		return r
	}
	r.Misc = h.lists.Check(r.Syntax.LocalPart, r.Syntax.Domain)
	out, hit, err := h.results.Do(ctx, r.Syntax.Normalized, force, func() (job.EmailResult, time.Duration) {
		v := h.verify(ctx, r)
		if v.Reachable == job.ReachableUnknown {
			return v, 0 // a temporary state: ask again next time
		}
		return v, h.cfg.CacheTTL
	})
	if err != nil {
		r.Reachable, r.SMTP.Error = job.ReachableUnknown, err.Error()
		return r
	}
	if hit {
		cacheHits.Inc()
	}
	verdicts.With(string(out.Reachable)).Inc()
	return out
}

// verify does the network part for a syntactically valid address.
func (h *Handler) verify(ctx context.Context, r job.EmailResult) job.EmailResult {
	ctx, cancel := context.WithTimeout(smtpprobe.ForJob(ctx), h.cfg.Timeout)
	defer cancel()

	mx := mxlookup.Lookup(ctx, h.res, r.Syntax.Domain)
	r.DNS = mx.EmailDNS
	switch {
	case mx.NoDomain:
		r.Reachable = job.ReachableInvalid
		return r
	case mx.Temporary:
		r.Reachable = job.ReachableUnknown
		return r
	}

	out := h.probe(ctx, mx.Hosts, r.Syntax.Normalized, r.Syntax.SMTPUTF8)
	s := &r.SMTP
	s.Checked, s.CanConnect, s.MXHost = out.Checked, out.Connected, out.Host
	if out.Err != nil {
		s.Error = out.Err.Error()
	}
	if out.NoAddress {
		r.DNS.Error = "no mail host has an address"
		r.Reachable = job.ReachableInvalid
		return r
	}
	if !out.Checked {
		r.Reachable = job.ReachableUnknown
		return r
	}
	s.Code, s.EnhancedCode, s.Message = out.Reply.Code, out.Reply.Enhanced, out.Reply.Message
	class := smtpprobe.Classify(out.Reply)
	switch class {
	case smtpprobe.Accepted:
		s.Deliverable = true
		s.CatchAll = h.isCatchAll(ctx, r.Syntax.Domain, mx.Hosts)
		if s.CatchAll || r.Misc.Disposable || r.Misc.RoleAccount {
			r.Reachable = job.ReachableRisky
		} else {
			r.Reachable = job.ReachableSafe
		}
	case smtpprobe.MailboxFull:
		s.FullInbox = true
		r.Reachable = job.ReachableRisky
	case smtpprobe.Disabled:
		s.Disabled = true
		r.Reachable = job.ReachableInvalid
	case smtpprobe.NoSuchUser:
		r.Reachable = job.ReachableInvalid
	default: // temporary, greylisted, blocked, unexpected
		s.Error = class.String()
		r.Reachable = job.ReachableUnknown
	}
	return r
}

// probe asks the mail hosts, once more after GreylistRetry when the server
// greylists and the validation's deadline leaves room for it.
func (h *Handler) probe(ctx context.Context, hosts []string, addr string, utf8 bool) smtpprobe.Outcome {
	out := h.prober.Check(ctx, hosts, addr, utf8)
	if h.cfg.GreylistRetry <= 0 || !out.Checked || smtpprobe.Classify(out.Reply) != smtpprobe.Greylisted {
		return out
	}
	if d, ok := ctx.Deadline(); ok && time.Until(d) < h.cfg.GreylistRetry+h.cfg.CommandTimeout {
		return out
	}
	t := time.NewTimer(h.cfg.GreylistRetry)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return out
	}
	return h.prober.Check(ctx, hosts, addr, utf8)
}

// isCatchAll asks, once per domain within CACHE_TTL, whether the mail
// hosts accept an address nobody has. An unclear answer is not cached and
// counts as "not catch-all".
func (h *Handler) isCatchAll(ctx context.Context, domain string, hosts []string) bool {
	yes, _, _ := h.catchAll.Do(ctx, domain, false, func() (bool, time.Duration) {
		out := h.prober.Check(ctx, hosts, randomLocal()+"@"+domain, false)
		if !out.Checked {
			return false, 0
		}
		switch smtpprobe.Classify(out.Reply) {
		case smtpprobe.Accepted:
			return true, h.cfg.CacheTTL
		case smtpprobe.NoSuchUser, smtpprobe.Disabled:
			return false, h.cfg.CacheTTL
		}
		return false, 0
	})
	return yes
}

// randomLocal is a local part no one has: 26 random base32 characters.
func randomLocal() string { return strings.ToLower(rand.Text()) }
