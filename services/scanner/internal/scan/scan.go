package scan

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/surveyor/surveyor/pkg/fingerprint"
	"github.com/surveyor/surveyor/pkg/job"
	"github.com/surveyor/surveyor/pkg/resolver"
	"github.com/surveyor/surveyor/pkg/worker"
	"github.com/surveyor/surveyor/services/scanner/internal/fetch"
	"github.com/surveyor/surveyor/services/scanner/internal/inspect"
)

// Scanner handles scan jobs; it is a worker.Handler and safe for
// concurrent use.
type Scanner struct {
	cfg    Config
	engine func() *fingerprint.Engine
	client *fetch.Client
	dns    *resolver.Resolver
}

// New builds a Scanner. engine is called once per scan, so the caller can
// swap in a new engine when custom fingerprints change.
func New(cfg Config, engine func() *fingerprint.Engine) *Scanner {
	dns := resolver.New(cfg.DNSServer)
	return &Scanner{
		cfg:    cfg,
		engine: engine,
		dns:    dns,
		client: fetch.New(fetch.Options{
			UserAgent:     cfg.UserAgent,
			BodyLimit:     int64(cfg.BodyLimit),
			MaxRedirects:  cfg.MaxRedirects,
			DialTimeout:   cfg.DialTimeout,
			TLSTimeout:    cfg.TLSTimeout,
			HeaderTimeout: cfg.HeaderTimeout,
			BodyTimeout:   cfg.BodyTimeout,
			Resolver:      dns,
			Targets:       cfg.Targets,
			RootCAs:       cfg.RootCAs,
		}),
	}
}

// Close releases pooled connections.
func (s *Scanner) Close() { s.client.Close() }

// robotsLimit bounds the robots.txt kept for fingerprints.
const robotsLimit = 512 << 10

// Handle scans j.URL. Fetch failures come back Permanent with a one-line
// reason: the scan already retried once, and the runtime should not again.
func (s *Scanner) Handle(ctx context.Context, j *job.Job, _ worker.Progress) (any, error) {
	// The URL is canonical (ingest made it with job.ParseTarget); a
	// document that does not parse fails for good.
	u, err := url.Parse(j.URL)
	if err != nil {
		return nil, worker.Permanent(fmt.Errorf("bad URL %q", j.URL))
	}
	fallback := s.cfg.HTTPFallback && u.Scheme == "https"
	budget, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()

	var dnsDone chan *job.DNSInfo
	if j.Wants(job.OptionDNS) {
		dnsDone = make(chan *job.DNSInfo, 1)
		go func() { dnsDone <- inspect.DNS(budget, s.dns, u.Hostname()) }()
	}

	resp, err := s.fetch(budget, j.URL, fallback)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err() // the worker is stopping: let the job be redelivered
		}
		kind, reason := fetch.Classify(err)
		if kind != fetch.Refused {
			reason = u.Host + ": " + reason
		}
		return nil, worker.Permanent(errors.New(reason))
	}

	res := &job.ScanResult{
		FinalURL:       resp.URL.String(),
		HTTPStatus:     resp.Status,
		IP:             resp.RemoteIP,
		Redirects:      append([]string{}, resp.Redirects...),
		ResponseTimeMS: resp.Elapsed.Milliseconds(),
	}
	// The page is read once: the security and emails sections take what
	// they need from the pass that gathers the fingerprint evidence.
	var markup inspect.Markup
	var refs func(fingerprint.Ref)
	if j.Wants(job.OptionSecurity) || j.Wants(job.OptionEmails) {
		refs = markup.Add
	}
	ev := s.evidence(resp, refs)
	res.Title = ev.Title
	if j.Wants(job.OptionDNS) {
		res.DNS = <-dnsDone
		ev.DNS = inspect.DNSEvidence(res.DNS)
	}
	if j.Wants(job.OptionTechnologies) {
		engine := s.engine()
		if engine.Uses("robots") {
			ev.Robots = s.robots(budget, resp.URL)
		}
		found := engine.Analyze(ev)
		res.Technologies = make([]job.Technology, len(found))
		for i, d := range found {
			res.Technologies[i] = job.Technology(d)
		}
	}
	if j.Wants(job.OptionHeaders) {
		res.Headers = lowerHeaders(resp.Header)
	}
	if j.Wants(job.OptionTLS) && resp.TLS != nil {
		res.TLS = inspect.TLS(resp.TLS, resp.VerifyErr)
	}
	if j.Wants(job.OptionSecurity) {
		res.Security = inspect.Grade(inspect.Page{
			HTTPS:         resp.URL.Scheme == "https",
			Header:        resp.Header,
			Cookies:       resp.Cookies,
			HTTPSRedirect: s.httpsRedirect(budget, resp),
			Markup:        markup,
		})
	}
	if j.Wants(job.OptionEmails) {
		res.Emails = inspect.Emails(markup.Mailto, ev.Text)
	}
	return res, nil
}

// fetch makes the scan's one retry: over plain http when https could not
// connect or handshake (and fallback is allowed), otherwise the same URL
// again after a transient failure.
func (s *Scanner) fetch(ctx context.Context, target string, fallback bool) (*fetch.Response, error) {
	resp, err := s.client.Get(ctx, target)
	if err == nil {
		return resp, nil
	}
	kind, _ := fetch.Classify(err)
	if !kind.Connect() || ctx.Err() != nil {
		return nil, err
	}
	if fallback && kind != fetch.DNSTemporary {
		target = "http://" + strings.TrimPrefix(target, "https://")
	} else {
		select {
		case <-time.After(250 * time.Millisecond):
		case <-ctx.Done():
			return nil, err
		}
	}
	if resp, err2 := s.client.Get(ctx, target); err2 == nil {
		return resp, nil
	}
	return nil, err // the first failure says more about the URL asked for
}

// evidence gathers what the fingerprint engine matches, handing refs (when
// not nil) the page's references on the way. A non-HTML response is judged
// on its headers alone.
func (s *Scanner) evidence(resp *fetch.Response, refs func(fingerprint.Ref)) *fingerprint.Evidence {
	ev := &fingerprint.Evidence{
		URL:        resp.URL.String(),
		Status:     resp.Status,
		Headers:    lowerHeaders(resp.Header),
		Cookies:    map[string]string{},
		CertIssuer: inspect.CertIssuer(resp.TLS),
	}
	for _, c := range resp.Cookies {
		ev.Cookies[strings.ToLower(c.Name)] = c.Value
	}
	if resp.HTML {
		fingerprint.ParseHTMLRefs(resp.Body, ev, refs)
	}
	return ev
}

// robots fetches robots.txt of the final site: one request, no redirects.
func (s *Scanner) robots(ctx context.Context, page *url.URL) string {
	r, err := s.client.GetOne(ctx, page.Scheme+"://"+page.Host+"/robots.txt", robotsLimit)
	if err != nil || r.Status != http.StatusOK || r.HTML {
		return ""
	}
	return string(r.Body)
}

// httpsRedirect tells whether the site's plain-http address sends visitors
// to https. If the chain already went from http to https, that is the
// answer; otherwise one request to http://host/ asks. A closed port 80
// counts as a pass: nothing is served in clear text. Nil when unknown.
func (s *Scanner) httpsRedirect(ctx context.Context, resp *fetch.Response) *bool {
	yes, no := true, false
	if resp.URL.Scheme != "https" {
		return &no
	}
	for _, r := range resp.Redirects {
		if strings.HasPrefix(r, "http://") {
			return &yes
		}
	}
	if resp.URL.Port() != "" {
		return nil // a site on a custom port has no well-known plain-http address
	}
	probe, err := s.client.GetOne(ctx, "http://"+resp.URL.Host+"/", 0)
	if err != nil {
		if kind, _ := fetch.Classify(err); kind == fetch.ConnRefused {
			return &yes
		}
		return nil
	}
	loc := probe.Header.Get("Location")
	ok := probe.Status >= 300 && probe.Status < 400 && strings.HasPrefix(strings.ToLower(loc), "https://")
	return &ok
}

// lowerHeaders copies h with lower-case names, as the contract shows them.
func lowerHeaders(h http.Header) map[string][]string {
	out := make(map[string][]string, len(h))
	for k, v := range h {
		k = strings.ToLower(k)
		out[k] = append(out[k], v...)
	}
	return out
}
