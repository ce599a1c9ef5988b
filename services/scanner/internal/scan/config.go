// Package scan is the scanner's job handler: it fetches the job's URL
// safely, names the technologies the page runs and adds the optional
// sections the job asked for.
package scan

import (
	"crypto/x509"
	"time"

	"github.com/surveyor/surveyor/pkg/config"
	"github.com/surveyor/surveyor/services/scanner/internal/fetch"
)

// Config is the scanner's configuration (contract §2).
type Config struct {
	AllowPrivate  bool          // ALLOW_PRIVATE_TARGETS
	DNSServer     string        // DNS_SERVER; "" means /etc/resolv.conf
	UserAgent     string        // SCANNER_USER_AGENT
	BodyLimit     int           // SCANNER_BODY_LIMIT: bytes of page kept
	Timeout       time.Duration // SCANNER_TIMEOUT: budget of one scan, retries included
	DialTimeout   time.Duration // SCANNER_DIAL_TIMEOUT
	TLSTimeout    time.Duration // SCANNER_TLS_TIMEOUT
	HeaderTimeout time.Duration // SCANNER_HEADER_TIMEOUT: request sent to headers
	BodyTimeout   time.Duration // SCANNER_BODY_TIMEOUT: reading the page
	MaxRedirects  int           // SCANNER_MAX_REDIRECTS (0..10)
	// HTTPFallback: when https cannot connect or handshake, try plain
	// http once (SCANNER_HTTP_FALLBACK). Ingest turns "example.com" into
	// https://example.com, so this is how a scheme-less URL "tries https,
	// then http".
	HTTPFallback bool
	// RootCAs verifies certificates; nil means the system roots. Not
	// from the environment: tests trust their own servers with it.
	RootCAs *x509.CertPool
}

// DefaultConfig is the configuration with every default.
func DefaultConfig() Config {
	return Config{
		BodyLimit:     fetch.DefaultBodyLimit,
		Timeout:       20 * time.Second,
		DialTimeout:   5 * time.Second,
		TLSTimeout:    5 * time.Second,
		HeaderTimeout: 10 * time.Second,
		BodyTimeout:   10 * time.Second,
		MaxRedirects:  fetch.DefaultMaxRedirects,
		HTTPFallback:  true,
	}
}

// ConfigFromEnv reads Config; bad values are recorded in r.
func ConfigFromEnv(r *config.Reader) Config {
	d := DefaultConfig()
	c := Config{
		AllowPrivate:  r.Bool("ALLOW_PRIVATE_TARGETS", false),
		DNSServer:     r.String("DNS_SERVER", ""),
		UserAgent:     r.String("SCANNER_USER_AGENT", fetch.DefaultUserAgent),
		BodyLimit:     r.Int("SCANNER_BODY_LIMIT", d.BodyLimit, 1024, 64<<20),
		Timeout:       r.Duration("SCANNER_TIMEOUT", d.Timeout),
		DialTimeout:   r.Duration("SCANNER_DIAL_TIMEOUT", d.DialTimeout),
		TLSTimeout:    r.Duration("SCANNER_TLS_TIMEOUT", d.TLSTimeout),
		HeaderTimeout: r.Duration("SCANNER_HEADER_TIMEOUT", d.HeaderTimeout),
		BodyTimeout:   r.Duration("SCANNER_BODY_TIMEOUT", d.BodyTimeout),
		MaxRedirects:  r.Int("SCANNER_MAX_REDIRECTS", d.MaxRedirects, 0, fetch.DefaultMaxRedirects),
		HTTPFallback:  r.Bool("SCANNER_HTTP_FALLBACK", d.HTTPFallback),
	}
	if c.DNSServer != "" && !hasPort(c.DNSServer) {
		r.Fail("DNS_SERVER", "%q is not host:port", c.DNSServer)
	}
	return c
}
