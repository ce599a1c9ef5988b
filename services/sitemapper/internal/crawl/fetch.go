package crawl

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/surveyor/surveyor/pkg/sitemap"
	"github.com/surveyor/surveyor/services/sitemapper/internal/links"
	"github.com/surveyor/surveyor/services/sitemapper/internal/normalize"
	"github.com/surveyor/surveyor/services/sitemapper/internal/robots"
	"github.com/surveyor/surveyor/services/sitemapper/internal/sitemaps"
)

// robotsRetryWait is the pause before the one retry of a robots.txt that
// answered 429/5xx or did not answer.
const robotsRetryWait = time.Second

// maxDrain is how much of an unread body is discarded to keep its
// connection for the next request; a larger rest closes the connection.
const maxDrain = 64 << 10

// link is a normalized URL and its hash, computed by the fetch goroutine.
type link struct {
	url  string
	hash uint64
}

// result is what one task sends back to the coordinator.
type result struct {
	it  *item
	err error

	status        int
	contentType   string
	lastModified  string
	title         string
	canonical     string
	location      string // normalized redirect target
	retryAfter    time.Duration
	noindex       bool
	nofollow      bool
	bodyTruncated bool
	links         []link

	policy  *robots.Policy
	sitemap *sitemaps.File
}

func (c *crawl) do(ctx context.Context, it *item) *result {
	switch it.kind {
	case taskRobots:
		return c.fetchRobots(ctx, it)
	case taskSitemap:
		return c.fetchSitemap(ctx, it)
	}
	return c.fetchPage(ctx, it)
}

func (c *crawl) get(ctx context.Context, u string, accept string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", c.cfg.UserAgent)
	req.Header.Set("Accept", accept)
	return c.client.Do(req)
}

// drain discards a small rest of a body so its connection is reused.
func drain(body io.ReadCloser) {
	io.CopyN(io.Discard, body, maxDrain)
	body.Close()
}

func (c *crawl) fetchPage(ctx context.Context, it *item) *result {
	r := &result{it: it}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	resp, err := c.get(ctx, it.url, "text/html,application/xhtml+xml,*/*;q=0.8")
	if err != nil {
		r.err = err
		return r
	}
	defer drain(resp.Body)
	r.status = resp.StatusCode
	base := resp.Request.URL

	if r.status >= 300 && r.status < 400 {
		if loc := resp.Header.Get("Location"); loc != "" {
			target, err := normalize.Parse(loc, base)
			if err != nil {
				r.err = fmt.Errorf("redirect to unusable location %q", loc)
			} else {
				r.location = target
			}
		}
		return r
	}
	if r.status == http.StatusTooManyRequests || r.status == http.StatusServiceUnavailable {
		r.retryAfter = retryAfter(resp.Header.Get("Retry-After"), time.Now())
	}
	if t, err := http.ParseTime(resp.Header.Get("Last-Modified")); err == nil {
		r.lastModified = t.UTC().Format(time.RFC3339)
	}
	r.noindex, r.nofollow = links.XRobotsTag(resp.Header.Values("X-Robots-Tag"), robotsToken)

	br := bufio.NewReader(resp.Body)
	r.contentType = resp.Header.Get("Content-Type")
	if r.contentType == "" {
		peek, _ := br.Peek(512)
		r.contentType = http.DetectContentType(peek)
	}
	if r.status < 200 || r.status >= 300 || !sitemap.IsHTML(r.contentType) {
		return r
	}

	lr := &io.LimitedReader{R: br, N: int64(c.cfg.BodyLimit)}
	doc, err := links.Parse(lr, robotsToken, maxLinksPerPage)
	if err != nil {
		r.err = err
	} else if lr.N == 0 {
		if n, _ := br.Read(make([]byte, 1)); n > 0 {
			r.bodyTruncated = true
		}
	}
	if doc.Base != "" {
		if b, err := base.Parse(doc.Base); err == nil {
			base = b
		}
	}
	r.title = doc.Title
	r.noindex = r.noindex || doc.Noindex
	r.nofollow = r.nofollow || doc.Nofollow
	if doc.Canonical != "" {
		if u, err := normalize.Parse(doc.Canonical, base); err == nil {
			r.canonical = u
		}
	}
	if r.nofollow {
		return r
	}
	if doc.Refresh != "" {
		doc.Links = append(doc.Links, doc.Refresh)
	}
	r.links = make([]link, 0, len(doc.Links))
	for _, l := range doc.Links {
		if u, err := normalize.Parse(l, base); err == nil {
			r.links = append(r.links, link{u, c.hash(u)})
		}
	}
	return r
}

// retryAfter reads a Retry-After value (seconds or an HTTP date), bounded
// to maxRetryWait.
func retryAfter(v string, now time.Time) time.Duration {
	d := defaultRetryWait
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		d = time.Duration(s) * time.Second
	} else if t, err := http.ParseTime(v); err == nil {
		d = t.Sub(now)
	}
	return max(0, min(d, maxRetryWait))
}

// fetchRobots reads an origin's robots.txt, following up to five
// redirects, and retries once when the server errs or does not answer.
func (c *crawl) fetchRobots(ctx context.Context, it *item) *result {
	for attempt := 0; ; attempt++ {
		status, body, err := c.readFollowing(ctx, it.url, "text/plain,*/*;q=0.5", robots.MaxSize, func(rd io.Reader) ([]byte, error) {
			return io.ReadAll(io.LimitReader(rd, robots.MaxSize))
		})
		retry := err != nil || status == http.StatusTooManyRequests || status >= 500
		if !retry || attempt == 1 || fatalForStart(err) {
			return &result{it: it, err: err, status: status, policy: robots.New(status, body, err, robotsToken)}
		}
		select {
		case <-ctx.Done():
			return &result{it: it, err: ctx.Err(), policy: robots.New(0, nil, ctx.Err(), robotsToken)}
		case <-time.After(robotsRetryWait):
		}
	}
}

// fetchSitemap reads one sitemap file, following up to five redirects.
func (c *crawl) fetchSitemap(ctx context.Context, it *item) *result {
	r := &result{it: it}
	var f *sitemaps.File
	status, _, err := c.readFollowing(ctx, it.url, "application/xml,text/xml,*/*;q=0.5", sitemaps.MaxSize, func(rd io.Reader) ([]byte, error) {
		var err error
		f, err = sitemaps.Read(rd, c.seedCap)
		return nil, err
	})
	r.status, r.err = status, err
	if status >= 200 && status < 300 {
		r.sitemap = f // a partly read file still gives its entries
	}
	return r
}

// readFollowing GETs u, follows up to five redirects (robots.txt and
// sitemaps are site files, not pages: their redirects are not listed) and
// hands a 2xx body to read.
func (c *crawl) readFollowing(ctx context.Context, u, accept string, limit int64, read func(io.Reader) ([]byte, error)) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	for hop := 0; ; hop++ {
		resp, err := c.get(ctx, u, accept)
		if err != nil {
			return 0, nil, err
		}
		loc := resp.Header.Get("Location")
		if resp.StatusCode >= 300 && resp.StatusCode < 400 && loc != "" && hop < 5 {
			next, err := resp.Request.URL.Parse(loc)
			drain(resp.Body)
			if err != nil {
				return resp.StatusCode, nil, err
			}
			if next.Scheme != "http" && next.Scheme != "https" {
				return resp.StatusCode, nil, errors.New("redirect to a non-http URL")
			}
			u = next.String()
			continue
		}
		defer drain(resp.Body)
		if resp.StatusCode < 200 || resp.StatusCode >= 300 {
			return resp.StatusCode, nil, nil
		}
		body, err := read(io.LimitReader(resp.Body, limit))
		return resp.StatusCode, body, err
	}
}
