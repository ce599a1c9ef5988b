// Package scan is the scanner's job handler: it fetches the job's URL
// safely, names the technologies the page runs and adds the optional
// sections the job asked for.
package scan

import (
	"crypto/x509"
	"time"

	"github.com/surveyor/surveyor/pkg/config"
	"github.com/surveyor/surveyor/pkg/netguard"
	"github.com/surveyor/surveyor/services/scanner/internal/fetch"
)

// Config is the scanner's configuration (contract §2).
type Config struct {
	// Targets and DNSServer are shared settings (ALLOW_PRIVATE_TARGETS,
	// DNS_SERVER): the binary binds them, Register does not declare them.
	Targets   netguard.Policy
	DNSServer string // "" means /etc/resolv.conf

	UserAgent     string
	BodyLimit     int           // bytes of page kept
	Timeout       time.Duration // budget of one scan, retries included
	DialTimeout   time.Duration
	TLSTimeout    time.Duration
	HeaderTimeout time.Duration // request sent to headers
	BodyTimeout   time.Duration // reading the page
	MaxRedirects  int
	// HTTPFallback: when https cannot connect or handshake, try plain
	// http once. Ingest turns "example.com" into https://example.com, so
	// this is how a scheme-less URL "tries https, then http".
	HTTPFallback bool
	// RootCAs verifies certificates; nil means the system roots. Not
	// from the environment: tests trust their own servers with it.
	RootCAs *x509.CertPool
}

// Register declares the scanner's own variables.
func (c *Config) Register(s *config.Set) {
	s.String(&c.UserAgent, "SCANNER_USER_AGENT", fetch.DefaultUserAgent, "User-Agent header of scans")
	s.Int(&c.BodyLimit, "SCANNER_BODY_LIMIT", fetch.DefaultBodyLimit, 1024, 64<<20, "bytes of a page read and inspected")
	s.Duration(&c.Timeout, "SCANNER_TIMEOUT", 20*time.Second, "budget of one scan, retries included")
	s.Duration(&c.DialTimeout, "SCANNER_DIAL_TIMEOUT", 5*time.Second, "TCP connect")
	s.Duration(&c.TLSTimeout, "SCANNER_TLS_TIMEOUT", 5*time.Second, "TLS handshake")
	s.Duration(&c.HeaderTimeout, "SCANNER_HEADER_TIMEOUT", 10*time.Second, "from request sent to response headers")
	s.Duration(&c.BodyTimeout, "SCANNER_BODY_TIMEOUT", 10*time.Second, "reading the page; on expiry the part read is kept")
	s.Int(&c.MaxRedirects, "SCANNER_MAX_REDIRECTS", fetch.DefaultMaxRedirects, 0, fetch.DefaultMaxRedirects, "redirects followed")
	s.Bool(&c.HTTPFallback, "SCANNER_HTTP_FALLBACK", true, "when https cannot connect or handshake, try plain http once")
}
