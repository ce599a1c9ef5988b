package verify

import (
	"os"
	"strings"
	"time"

	"github.com/surveyor/surveyor/pkg/config"
	"github.com/surveyor/surveyor/services/emailcheck/internal/syntax"
)

// Config is emailcheck's configuration (contract §2 plus its own
// EMAILCHECK_* variables).
type Config struct {
	AllowPrivate bool          // ALLOW_PRIVATE_TARGETS
	DNSServer    string        // DNS_SERVER, "" = system resolvers
	SMTPPort     int           // SMTP_PORT
	HELO         string        // SMTP_HELO
	From         string        // SMTP_FROM
	CacheTTL     time.Duration // CACHE_TTL: per-address results and per-domain catch-all answers

	Concurrency int           // EMAILCHECK_CONCURRENCY: validations at once
	PerServer   int           // EMAILCHECK_PER_SERVER: connections per mail server
	Timeout     time.Duration // EMAILCHECK_TIMEOUT: one whole validation

	ConnectTimeout time.Duration // EMAILCHECK_CONNECT_TIMEOUT
	BannerTimeout  time.Duration // EMAILCHECK_BANNER_TIMEOUT
	CommandTimeout time.Duration // EMAILCHECK_COMMAND_TIMEOUT
	IdleTimeout    time.Duration // EMAILCHECK_IDLE_TIMEOUT: pooled session kept this long unused
	// GreylistRetry, when set, asks a greylisting server once more after
	// this delay if the validation's time allows (EMAILCHECK_GREYLIST_RETRY).
	GreylistRetry time.Duration

	ListsDir string // EMAILCHECK_LISTS_DIR: extra list files
}

// ConfigFromEnv reads the configuration; bad values are recorded in r.
func ConfigFromEnv(r *config.Reader) Config {
	helo := r.String("SMTP_HELO", defaultHELO())
	if v := syntax.Parse("x@" + helo); !v.Valid {
		r.Fail("SMTP_HELO", "%q is not a host name: %s", helo, v.Reason)
	}
	from := r.String("SMTP_FROM", "verify@"+helo)
	if v := syntax.Parse(from); !v.Valid {
		r.Fail("SMTP_FROM", "%q is not an email address: %s", from, v.Reason)
	}
	c := Config{
		AllowPrivate:   r.Bool("ALLOW_PRIVATE_TARGETS", false),
		DNSServer:      r.String("DNS_SERVER", ""),
		SMTPPort:       r.Int("SMTP_PORT", 25, 1, 65535),
		HELO:           helo,
		From:           from,
		CacheTTL:       r.Duration("CACHE_TTL", 24*time.Hour),
		Concurrency:    r.Int("EMAILCHECK_CONCURRENCY", 64, 1, 10000),
		PerServer:      r.Int("EMAILCHECK_PER_SERVER", 2, 1, 100),
		Timeout:        r.Duration("EMAILCHECK_TIMEOUT", 2*time.Minute),
		ConnectTimeout: r.Duration("EMAILCHECK_CONNECT_TIMEOUT", 10*time.Second),
		BannerTimeout:  r.Duration("EMAILCHECK_BANNER_TIMEOUT", 30*time.Second),
		CommandTimeout: r.Duration("EMAILCHECK_COMMAND_TIMEOUT", 30*time.Second),
		IdleTimeout:    r.Duration("EMAILCHECK_IDLE_TIMEOUT", 20*time.Second),
		GreylistRetry:  r.Duration("EMAILCHECK_GREYLIST_RETRY", 0),
		ListsDir:       r.String("EMAILCHECK_LISTS_DIR", ""),
	}
	if c.ListsDir != "" {
		if st, err := os.Stat(c.ListsDir); err != nil || !st.IsDir() {
			r.Fail("EMAILCHECK_LISTS_DIR", "%q is not a readable directory", c.ListsDir)
		}
	}
	return c
}

// defaultHELO is the machine's name when it is fully qualified; mail
// servers expect a domain in EHLO (RFC 5321 4.1.1.1).
func defaultHELO() string {
	if h, err := os.Hostname(); err == nil && strings.Contains(h, ".") && syntax.Parse("x@"+h).Valid {
		return strings.ToLower(h)
	}
	return "surveyor.localdomain"
}
