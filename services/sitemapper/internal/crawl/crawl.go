package crawl

import (
	"context"
	"errors"
	"hash/maphash"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/surveyor/surveyor/pkg/job"
	"github.com/surveyor/surveyor/pkg/netguard"
	"github.com/surveyor/surveyor/pkg/resolver"
	"github.com/surveyor/surveyor/pkg/sitemap"
	"github.com/surveyor/surveyor/pkg/worker"
	"github.com/surveyor/surveyor/services/sitemapper/internal/normalize"
	"github.com/surveyor/surveyor/services/sitemapper/internal/robots"
)

// Crawl bounds that are not configuration.
const (
	maxRedirects     = 10               // hops of one redirect chain
	maxRetries       = 2                // of one URL answered 429 or 503
	defaultRetryWait = 5 * time.Second  // 429/503 without Retry-After
	maxRetryWait     = 60 * time.Second // a longer Retry-After is cut to this
	maxCrawlDelay    = 60 * time.Second // a longer Crawl-delay is cut to this
	maxSitemapFiles  = 50               // sitemap files fetched per crawl
	maxSitemapLevels = 3                // index -> index -> urlset
	maxLinksPerPage  = 5000
	progressEvery    = 2 * time.Second // heartbeat while nothing completes
)

type taskKind uint8

const (
	taskPage taskKind = iota
	taskRobots
	taskSitemap
)

// item is one URL to fetch.
type item struct {
	url     string
	hash    uint64
	kind    taskKind
	depth   int
	source  job.Source
	lastmod string   // from a sitemap
	from    string   // first URL of the redirect chain that led here
	chain   []uint64 // hashes of that chain, to cut loops
	level   int      // sitemap nesting
	listed  bool     // a sitemap named by robots.txt: robots rules do not apply
	retries int
	done    bool // dispatched; an upgraded sitemap seed sits in two queues
}

// queue is a FIFO of items.
type queue struct {
	items []*item
	head  int
}

func (q *queue) push(it *item) { q.items = append(q.items, it) }

func (q *queue) pop() *item {
	if q.head == len(q.items) {
		return nil
	}
	it := q.items[q.head]
	q.items[q.head] = nil
	q.head++
	if q.head == len(q.items) {
		q.items, q.head = q.items[:0], 0
	} else if q.head > 1024 && q.head > len(q.items)/2 {
		q.items, q.head = append(q.items[:0], q.items[q.head:]...), 0
	}
	return it
}

func (q *queue) empty() bool { return q.head == len(q.items) }

// originState is the frontier and politeness state of one origin.
type originState struct {
	name          string
	policy        *robots.Policy // nil until robots.txt was read
	robotsStarted bool
	// Popped in this order: redirect targets and retries, sitemap files,
	// linked pages, then pages known only from a sitemap, so that a page
	// both linked and in a sitemap is reached as a link.
	urgent, files, links, seeds queue
	active                      int
	next                        time.Time // no request starts before
}

func (o *originState) hasWork() bool {
	return !o.urgent.empty() || !o.files.empty() || !o.links.empty() || !o.seeds.empty()
}

// pop returns the next item to fetch; sitemap-only pages wait while seeds
// is false.
func (o *originState) pop(seeds bool) *item {
	qs := []*queue{&o.urgent, &o.files, &o.links, &o.seeds}
	if !seeds {
		qs = qs[:3]
	}
	for _, q := range qs {
		for it := q.pop(); it != nil; it = q.pop() {
			if !it.done {
				return it
			}
		}
	}
	return nil
}

// crawl is one job's crawl; its fields belong to the coordinator goroutine.
type crawl struct {
	cfg      Config
	client   *http.Client
	maxPages int
	start    string
	progress worker.Progress
	seed     maphash.Seed

	scope   map[string]bool // in-scope origins
	origins map[string]*originState
	order   []*originState

	seen      map[uint64]struct{} // every URL met, in scope or not
	pageIdx   map[uint64]int      // listed pages by URL hash
	seedItems map[uint64]*item    // sitemap seeds not yet listed
	lastmods  map[uint64]string   // sitemap lastmod of URLs a link reached first
	seedCap   int

	pages     []job.SitemapPage
	ex        job.Excluded
	robotsTxt job.RobotsTxt
	truncated bool

	queued        int // page items waiting
	inflight      int // tasks running
	inflightPages int
	sitemapFiles  int
	seeds         int
	results       chan *result
	fatal         error
}

func newCrawl(h *Handler, start string, maxPages int, p worker.Progress) *crawl {
	tr := &http.Transport{
		DialContext:            h.dial.DialContext,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           64,
		MaxIdleConnsPerHost:    h.cfg.PerHost,
		IdleConnTimeout:        30 * time.Second,
		TLSHandshakeTimeout:    10 * time.Second,
		ResponseHeaderTimeout:  h.cfg.Timeout,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: 256 << 10,
	}
	if h.TLSClientConfig != nil {
		tr.TLSClientConfig = h.TLSClientConfig.Clone()
	}
	c := &crawl{
		cfg: h.cfg,
		client: &http.Client{
			Transport:     tr,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		maxPages:  maxPages,
		start:     start,
		progress:  p,
		seed:      maphash.MakeSeed(),
		scope:     map[string]bool{},
		origins:   map[string]*originState{},
		seen:      map[uint64]struct{}{},
		pageIdx:   map[uint64]int{},
		seedItems: map[uint64]*item{},
		lastmods:  map[uint64]string{},
		seedCap:   2*maxPages + 100,
		results:   make(chan *result),
	}
	o, _ := origin(start)
	c.scope[o] = true
	if t := twin(o); t != "" {
		c.scope[t] = true
	}
	return c
}

func (c *crawl) hash(s string) uint64 { return maphash.String(c.seed, s) }

func (c *crawl) originFor(name string) *originState {
	o := c.origins[name]
	if o == nil {
		o = &originState{name: name}
		c.origins[name] = o
		c.order = append(c.order, o)
	}
	return o
}

// run crawls until the frontier is empty, max_pages is reached or ctx ends.
func (c *crawl) run(ctx context.Context) (*job.SitemapResult, error) {
	tasks, cancel := context.WithCancel(ctx)
	defer cancel()

	h := c.hash(c.start)
	c.seen[h] = struct{}{}
	so, _ := origin(c.start)
	c.originFor(so).links.push(&item{url: c.start, hash: h, source: job.FromStart})
	c.queued++

	tick := time.NewTicker(progressEvery)
	defer tick.Stop()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	timedOut := false
loop:
	for c.fatal == nil {
		wake := c.dispatch(tasks)
		if c.inflight == 0 && wake.IsZero() {
			break
		}
		var timerC <-chan time.Time
		if !wake.IsZero() {
			timer.Reset(time.Until(wake))
			timerC = timer.C
		}
		select {
		case r := <-c.results:
			c.inflight--
			if ctx.Err() == nil {
				c.handle(r)
			}
		case <-timerC:
		case <-tick.C:
			c.report()
		case <-ctx.Done():
			timedOut = true
			break loop
		}
	}
	cancel()
	for ; c.inflight > 0; c.inflight-- {
		<-c.results
	}
	if c.fatal != nil {
		return nil, c.fatal
	}
	c.report()
	if c.robotsTxt.Sitemaps == nil {
		c.robotsTxt.Sitemaps = []string{}
	}
	if c.pages == nil {
		c.pages = []job.SitemapPage{}
	}
	return &job.SitemapResult{
		Pages:     c.pages,
		PageCount: len(c.pages),
		Truncated: c.truncated || (len(c.pages) >= c.maxPages && c.queued > 0),
		TimedOut:  timedOut,
		Excluded:  c.ex,
		RobotsTxt: c.robotsTxt,
	}, nil
}

func (c *crawl) report() {
	if c.progress != nil {
		c.progress.Report(job.SitemapProgress{PagesFetched: len(c.pages), Queued: c.queued})
	}
}

// limit is how many requests an origin may have in flight.
func (c *crawl) limit(o *originState) int {
	if o.policy != nil && o.policy.CrawlDelay > 0 {
		return 1
	}
	return c.cfg.PerHost
}

// dispatch starts every task that politeness and max_pages allow and
// returns when a waiting origin may go on (zero when none waits).
func (c *crawl) dispatch(ctx context.Context) time.Time {
	var wake time.Time
	now := time.Now()
	budget := len(c.pages)+c.inflightPages < c.maxPages
	for _, o := range c.order {
		if o.policy == nil {
			if !o.robotsStarted && o.hasWork() && budget {
				o.robotsStarted = true
				c.launch(ctx, o, &item{url: o.name + "/robots.txt", kind: taskRobots})
			}
			continue
		}
		for budget && o.active < c.limit(o) && o.hasWork() {
			if now.Before(o.next) {
				if wake.IsZero() || o.next.Before(wake) {
					wake = o.next
				}
				break
			}
			// Pages known only from sitemaps wait for the start page, whose
			// links are likely to reach them first.
			it := o.pop(len(c.pages) > 0 || c.inflightPages == 0)
			if it == nil {
				break
			}
			_, uri := origin(it.url)
			if !it.listed && !o.policy.Allowed(uri) {
				if it.kind == taskPage {
					c.queued--
					c.ex.Robots++
					it.done = true
				}
				continue
			}
			c.launch(ctx, o, it)
			if d := min(o.policy.CrawlDelay, maxCrawlDelay); d > 0 {
				o.next = now.Add(d)
			}
			budget = len(c.pages)+c.inflightPages < c.maxPages
		}
	}
	return wake
}

func (c *crawl) launch(ctx context.Context, o *originState, it *item) {
	it.done = true
	o.active++
	c.inflight++
	if it.kind == taskPage {
		c.queued--
		c.inflightPages++
	}
	go func() { c.results <- c.do(ctx, it) }()
}

func (c *crawl) handle(r *result) {
	o, _ := origin(r.it.url)
	c.originFor(o).active--
	switch r.it.kind {
	case taskRobots:
		c.handleRobots(c.originFor(o), r)
	case taskSitemap:
		c.handleSitemap(r)
	default:
		c.inflightPages--
		c.handlePage(c.originFor(o), r)
	}
}

// fatalForStart reports errors that make the start URL uncrawlable for
// good: a refused (non-public) address or a host that does not exist.
func fatalForStart(err error) bool {
	var refused *netguard.RefusedError
	if errors.As(err, &refused) || errors.Is(err, resolver.ErrNotFound) {
		return true
	}
	var dnsErr *net.DNSError
	return errors.As(err, &dnsErr) && dnsErr.IsNotFound
}

func (c *crawl) handleRobots(o *originState, r *result) {
	o.policy = r.policy
	start, _ := origin(c.start)
	if o.name == start {
		if fatalForStart(r.err) {
			c.fatal = worker.Permanent(r.err)
			return
		}
		c.robotsTxt = job.RobotsTxt{Found: r.policy.Found, Sitemaps: r.policy.Sitemaps, Status: r.policy.Status, Error: r.policy.Err}
	}
	for _, s := range r.policy.Sitemaps {
		c.addSitemapFile(s, 0, true)
	}
	c.addSitemapFile(o.name+"/sitemap.xml", 0, false)
}

// addSitemapFile queues a sitemap file of the site.
func (c *crawl) addSitemapFile(raw string, level int, listed bool) {
	u, err := normalize.Parse(raw, nil)
	if err != nil || level >= maxSitemapLevels || c.sitemapFiles >= maxSitemapFiles {
		return
	}
	h := c.hash(u)
	if _, ok := c.seen[h]; ok {
		return
	}
	o, _ := origin(u)
	if !c.scope[o] {
		return
	}
	c.seen[h] = struct{}{}
	c.sitemapFiles++
	c.originFor(o).files.push(&item{url: u, hash: h, kind: taskSitemap, level: level, listed: listed})
}

func (c *crawl) handleSitemap(r *result) {
	f := r.sitemap
	if f == nil {
		return
	}
	for _, e := range f.Entries {
		if f.Index {
			c.addSitemapFile(e.Loc, r.it.level+1, r.it.listed)
		} else {
			c.addSeed(e.Loc, e.LastMod)
		}
	}
	if f.Dropped > 0 && !f.Index {
		c.truncated = true
	}
}

// addSeed queues a page a sitemap lists.
func (c *crawl) addSeed(raw, lastmod string) {
	u, err := normalize.Parse(raw, nil)
	if err != nil {
		return
	}
	lm := sitemap.NormalizeLastMod(lastmod)
	h := c.hash(u)
	if _, ok := c.seen[h]; ok {
		if lm == "" {
			return
		}
		if i, ok := c.pageIdx[h]; ok {
			if c.pages[i].LastMod == "" {
				c.pages[i].LastMod = lm
				c.pages[i].Indexable = sitemap.IsIndexable(&c.pages[i])
			}
		} else if len(c.lastmods) < c.seedCap {
			c.lastmods[h] = lm
		}
		return
	}
	if c.seeds >= c.seedCap {
		c.truncated = true
		return
	}
	it := &item{url: u, hash: h, depth: 1, source: job.FromSitemap, lastmod: lm}
	if q := c.admit(it); q != nil {
		c.seeds++
		c.seedItems[h] = it
		q.seeds.push(it)
	}
}

// admit marks a new page URL seen and returns the origin to queue it on,
// or nil when it is out of scope, a trap or disallowed (and counted so).
func (c *crawl) admit(it *item) *originState {
	c.seen[it.hash] = struct{}{}
	name, uri := origin(it.url)
	if !c.scope[name] {
		c.ex.OutOfScope++
		return nil
	}
	if it.depth > c.cfg.MaxDepth || trap(it.url) != "" {
		c.ex.Traps++
		return nil
	}
	o := c.originFor(name)
	if o.policy != nil && !o.policy.Allowed(uri) {
		c.ex.Robots++
		return nil
	}
	if c.queued >= 4*c.maxPages+1000 {
		c.truncated = true
		return nil
	}
	c.queued++
	return o
}

// discover handles a link found at the given depth.
func (c *crawl) discover(l link, depth int) {
	if _, ok := c.seen[l.hash]; ok {
		c.upgrade(l.hash, depth)
		return
	}
	it := &item{url: l.url, hash: l.hash, depth: depth, source: job.FromLink}
	if q := c.admit(it); q != nil {
		q.links.push(it)
	}
}

// upgrade makes a page first met in a sitemap a linked page once a link
// reaches it: it is no orphan.
func (c *crawl) upgrade(h uint64, depth int) {
	if depth > c.cfg.MaxDepth {
		return
	}
	if i, ok := c.pageIdx[h]; ok {
		if p := &c.pages[i]; p.Source == job.FromSitemap {
			p.Source, p.Depth = job.FromLink, depth
		}
		return
	}
	if it, ok := c.seedItems[h]; ok {
		delete(c.seedItems, h)
		it.source, it.depth = job.FromLink, depth
		if !it.done { // still queued: move it up to the linked pages
			o, _ := origin(it.url)
			c.originFor(o).links.push(it)
		}
	}
}

func (c *crawl) handlePage(o *originState, r *result) {
	it := r.it
	if it.source == job.FromStart && len(it.chain) == 0 && fatalForStart(r.err) {
		c.fatal = worker.Permanent(r.err)
		return
	}
	if (r.status == http.StatusTooManyRequests || r.status == http.StatusServiceUnavailable) && it.retries < maxRetries {
		if next := time.Now().Add(r.retryAfter); next.After(o.next) {
			o.next = next
		}
		it.retries++
		it.done = false
		c.queued++
		o.urgent.push(it)
		return
	}
	if r.location != "" {
		c.redirect(it, r)
		return
	}
	c.list(it, r, it.url, "")
	if r.canonical != "" && r.canonical != it.url {
		c.discover(link{r.canonical, c.hash(r.canonical)}, it.depth+1)
	}
	for _, l := range r.links {
		c.discover(l, it.depth+1)
	}
}

// redirect follows a redirect within scope: the target is queued to be
// listed in the source's place. A chain that loops or runs too long is
// listed once, under its first URL, as an error.
func (c *crawl) redirect(it *item, r *result) {
	delete(c.seedItems, it.hash)
	from := it.from
	if from == "" {
		from = it.url
	}
	th := c.hash(r.location)
	loop := th == it.hash
	for _, h := range it.chain {
		loop = loop || h == th
	}
	switch {
	case loop:
		c.list(it, r, from, "redirect loop")
		return
	case len(it.chain) >= maxRedirects:
		c.list(it, r, from, "too many redirects")
		return
	}
	c.ex.Redirects++
	src, _ := origin(it.url)
	dst, _ := origin(r.location)
	if strings.HasPrefix(src, "http://") && strings.HasPrefix(dst, "https://") && c.scope[src] &&
		(hostOf(dst) == hostOf(src) || "http://"+hostOf(dst) == twin("http://"+hostOf(src))) {
		c.scope[dst] = true
		if t := twin(dst); t != "" {
			c.scope[t] = true
		}
	}
	if _, ok := c.seen[th]; ok {
		return
	}
	next := &item{
		url: r.location, hash: th, depth: it.depth, source: it.source, lastmod: it.lastmod,
		from: from, chain: append(it.chain[:len(it.chain):len(it.chain)], it.hash),
	}
	if q := c.admit(next); q != nil {
		q.urgent.push(next)
	}
}

// list adds a fetched URL to the result and counts why it stays out of the
// XML.
func (c *crawl) list(it *item, r *result, url, errMsg string) {
	p := job.SitemapPage{
		URL: url, Status: r.status, Title: r.title, Depth: it.depth,
		ContentType: r.contentType, LastMod: it.lastmod, Source: it.source,
		Noindex: r.noindex, Nofollow: r.nofollow, Canonical: r.canonical,
		BodyTruncated: r.bodyTruncated, Error: errMsg,
	}
	if url == it.url {
		p.RedirectedFrom = it.from
	}
	if p.LastMod == "" {
		p.LastMod = c.lastmods[it.hash]
	}
	if p.LastMod == "" {
		p.LastMod = r.lastModified
	}
	if p.Error == "" && r.err != nil {
		p.Error = describe(r.err)
	}
	p.Indexable = sitemap.IsIndexable(&p)
	switch {
	case p.Error != "" || p.Status < 200 || p.Status >= 300:
		c.ex.Errors++
	case !sitemap.IsHTML(p.ContentType):
		c.ex.NonHTML++
	case p.Noindex:
		c.ex.Noindex++
	case !p.Indexable:
		c.ex.Canonicalized++
	}
	delete(c.seedItems, it.hash)
	c.pageIdx[it.hash] = len(c.pages)
	c.pages = append(c.pages, p)
	c.report()
}

// describe turns a fetch error into a short message for the result.
func describe(err error) string {
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return "timeout"
	}
	var refused *netguard.RefusedError
	if errors.As(err, &refused) {
		return refused.Error()
	}
	return err.Error()
}
