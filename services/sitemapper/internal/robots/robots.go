// Package robots turns the outcome of fetching one origin's robots.txt into
// the rules the crawler obeys. Parsing is temoto/robotstxt's; this package
// decides what a missing, broken or unreachable file means:
//
//   - 2xx: the file's rules for our token, else for "*". Lines the parser
//     cannot place (rules before any User-agent, a non-numeric
//     Crawl-delay) are ignored, as Google does.
//   - 3xx after the fetcher gave up following, and 4xx but 429: there is no
//     robots.txt, everything is allowed.
//   - 429, 5xx, a timeout or a failed connection: the site cannot say what
//     it allows, so nothing is crawled on that origin. The fetcher retries
//     once before settling on this.
package robots

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/temoto/robotstxt"
)

// MaxSize is how much of a robots.txt is read; the rest is ignored
// (Google reads 500 KiB).
const MaxSize = 500 << 10

// Policy is one origin's robots.txt as applied to our crawl.
type Policy struct {
	Found      bool          // a 2xx robots.txt was read
	Status     int           // HTTP status, 0 when no response came
	Sitemaps   []string      // Sitemap: lines, as written
	CrawlDelay time.Duration // for our group
	Err        string        // what went wrong reading it and what that meant, or ""

	group    *robotstxt.Group
	allowAll bool
}

// New builds the policy from a fetch outcome: the status and body of the
// response, or the error that stopped it. agent is our user-agent token.
func New(status int, body []byte, fetchErr error, agent string) *Policy {
	switch {
	case fetchErr != nil:
		return &Policy{Err: fmt.Sprintf("robots.txt unavailable (%v): nothing crawled on this origin", fetchErr)}
	case status == 429 || status >= 500:
		return &Policy{Status: status, Err: fmt.Sprintf("robots.txt answered %d: nothing crawled on this origin", status)}
	case status < 200 || status >= 300:
		return &Policy{Status: status, allowAll: true}
	}
	if len(body) > MaxSize {
		body = body[:MaxSize]
	}
	p := &Policy{Found: true, Status: status}
	data, err := robotstxt.FromBytes(clean(body))
	if err != nil {
		p.allowAll = true
		p.Err = "robots.txt could not be parsed, treated as allowing everything: " + err.Error()
		return p
	}
	p.Sitemaps = data.Sitemaps
	p.group = data.FindGroup(agent)
	p.CrawlDelay = p.group.CrawlDelay
	return p
}

// clean drops the lines the parser would reject as a whole file: group
// rules before the first User-agent and Crawl-delay values that are not
// numbers.
func clean(body []byte) []byte {
	var out bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 4096), MaxSize)
	inGroup := false
	for sc.Scan() {
		line := sc.Text()
		key, val, _ := strings.Cut(strings.SplitN(line, "#", 2)[0], ":")
		key, val = strings.ToLower(strings.TrimSpace(key)), strings.TrimSpace(val)
		switch key {
		case "user-agent":
			inGroup = true
		case "allow", "disallow":
			if !inGroup {
				continue
			}
		case "crawl-delay":
			if _, err := strconv.ParseFloat(val, 64); !inGroup || err != nil {
				continue
			}
		}
		out.WriteString(line)
		out.WriteByte('\n')
	}
	return out.Bytes()
}

// Allowed reports whether a URL's path and query (its request URI) may be
// fetched.
func (p *Policy) Allowed(requestURI string) bool {
	if p.allowAll {
		return true
	}
	if p.group == nil {
		return false
	}
	return p.group.Test(requestURI)
}
