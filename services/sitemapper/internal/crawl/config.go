package crawl

import (
	"time"

	"github.com/surveyor/surveyor/pkg/config"
)

// Config is the sitemapper's configuration (contract §2).
type Config struct {
	AllowPrivate bool          // ALLOW_PRIVATE_TARGETS: crawl loopback and private addresses
	DNSServer    string        // DNS_SERVER: host:port, "" for the system resolvers
	PerHost      int           // SITEMAPPER_PER_HOST: requests in flight per origin
	MaxDepth     int           // SITEMAPPER_MAX_DEPTH: links followed from the start URL
	Timeout      time.Duration // SITEMAPPER_TIMEOUT: one request, headers and body
	JobBudget    time.Duration // SITEMAPPER_JOB_BUDGET: a whole crawl; what was found by then is the result
	BodyLimit    int           // SITEMAPPER_BODY_LIMIT: bytes of a page read and parsed
	UserAgent    string        // SITEMAPPER_USER_AGENT: the User-Agent header
}

// Defaults.
const (
	DefaultPerHost   = 4
	DefaultMaxDepth  = 25
	DefaultTimeout   = 20 * time.Second
	DefaultJobBudget = 15 * time.Minute
	DefaultBodyLimit = 5 << 20
	DefaultUserAgent = "Mozilla/5.0 (compatible; SurveyorBot/1.0; +https://github.com/surveyor/surveyor)"
)

// robotsToken is the user-agent token robots.txt groups and meta tags name
// us by (matched without regard to case).
const robotsToken = "surveyorbot"

// DefaultConfig is the configuration with every variable unset.
func DefaultConfig() Config {
	return Config{
		PerHost:   DefaultPerHost,
		MaxDepth:  DefaultMaxDepth,
		Timeout:   DefaultTimeout,
		JobBudget: DefaultJobBudget,
		BodyLimit: DefaultBodyLimit,
		UserAgent: DefaultUserAgent,
	}
}

// ConfigFromEnv reads the sitemapper's variables; bad values are recorded
// in r, whose Err then names them.
func ConfigFromEnv(r *config.Reader) Config {
	d := DefaultConfig()
	c := Config{
		AllowPrivate: r.Bool("ALLOW_PRIVATE_TARGETS", false),
		DNSServer:    r.String("DNS_SERVER", ""),
		PerHost:      r.Int("SITEMAPPER_PER_HOST", d.PerHost, 1, 64),
		MaxDepth:     r.Int("SITEMAPPER_MAX_DEPTH", d.MaxDepth, 1, 1000),
		Timeout:      r.Duration("SITEMAPPER_TIMEOUT", d.Timeout),
		JobBudget:    r.Duration("SITEMAPPER_JOB_BUDGET", d.JobBudget),
		BodyLimit:    r.Int("SITEMAPPER_BODY_LIMIT", d.BodyLimit, 64<<10, 1<<30),
		UserAgent:    r.String("SITEMAPPER_USER_AGENT", d.UserAgent),
	}
	if c.JobBudget < c.Timeout {
		r.Fail("SITEMAPPER_JOB_BUDGET", "%s is shorter than SITEMAPPER_TIMEOUT (%s)", c.JobBudget, c.Timeout)
	}
	return c
}
