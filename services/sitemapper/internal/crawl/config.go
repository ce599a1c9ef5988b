package crawl

import (
	"time"

	"github.com/surveyor/surveyor/pkg/config"
	"github.com/surveyor/surveyor/pkg/netguard"
)

// Config is the sitemapper's configuration (contract §2).
type Config struct {
	// Targets and DNSServer are shared settings (ALLOW_PRIVATE_TARGETS,
	// DNS_SERVER): the binary binds them, Register does not declare them.
	Targets   netguard.Policy
	DNSServer string // host:port, "" for the system resolvers

	PerHost   int           // requests in flight per origin
	MaxDepth  int           // links followed from the start URL
	Timeout   time.Duration // one request, headers and body
	JobBudget time.Duration // a whole crawl; what was found by then is the result
	BodyLimit int           // bytes of a page read and parsed
	UserAgent string
}

// Register declares the sitemapper's own variables.
func (c *Config) Register(s *config.Set) {
	s.Int(&c.PerHost, "SITEMAPPER_PER_HOST", 4, 1, 64, "requests in flight per origin")
	s.Int(&c.MaxDepth, "SITEMAPPER_MAX_DEPTH", 25, 1, 1000, "links followed from the start URL")
	s.Duration(&c.Timeout, "SITEMAPPER_TIMEOUT", 20*time.Second, "one request, headers and body")
	s.Duration(&c.JobBudget, "SITEMAPPER_JOB_BUDGET", 15*time.Minute, "a whole crawl; what was found by then is the result")
	s.Int(&c.BodyLimit, "SITEMAPPER_BODY_LIMIT", 5<<20, 64<<10, 1<<30, "bytes of a page read and parsed")
	s.String(&c.UserAgent, "SITEMAPPER_USER_AGENT",
		"Mozilla/5.0 (compatible; SurveyorBot/1.0; +https://github.com/surveyor/surveyor)", "User-Agent header of the crawler")
}

// Validate checks the budget against one request's timeout.
func (c *Config) Validate() error {
	if c.JobBudget < c.Timeout {
		return config.Errorf("SITEMAPPER_JOB_BUDGET", "%s is shorter than SITEMAPPER_TIMEOUT (%s)",
			config.FormatDuration(c.JobBudget), config.FormatDuration(c.Timeout))
	}
	return nil
}

// robotsToken is the user-agent token robots.txt groups and meta tags name
// us by (matched without regard to case).
const robotsToken = "surveyorbot"
