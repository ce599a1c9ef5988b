package verify

import (
	"errors"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/surveyor/surveyor/pkg/config"
	"github.com/surveyor/surveyor/pkg/netguard"
	"github.com/surveyor/surveyor/services/emailcheck/internal/smtpprobe"
	"github.com/surveyor/surveyor/services/emailcheck/internal/syntax"
)

// Config is emailcheck's configuration (contract §2 plus its own
// EMAILCHECK_* variables). How many validations run at once is the worker
// runtime's EMAILCHECK_CONCURRENCY, which bounds the calls to Handle.
type Config struct {
	// Targets, DNSServer and CacheTTL are shared settings
	// (ALLOW_PRIVATE_TARGETS, DNS_SERVER, CACHE_TTL): the binary binds
	// them, Register does not declare them.
	Targets   netguard.Policy
	DNSServer string        // "" = system resolvers
	CacheTTL  time.Duration // per-address results and per-domain catch-all answers

	SMTPPort int
	Proxy    *url.URL // SMTP_PROXY: every SMTP connection through this SOCKS5 proxy; nil = direct
	HELO     string   // "" = the machine's name (see identity)
	From     string   // "" = verify@<HELO>

	PerServer int           // connections per mail server
	Timeout   time.Duration // one whole validation

	ConnectTimeout time.Duration
	BannerTimeout  time.Duration
	CommandTimeout time.Duration
	IdleTimeout    time.Duration // pooled session kept this long unused
	// GreylistRetry, when set, asks a greylisting server once more after
	// this delay if the validation's time allows.
	GreylistRetry time.Duration

	ListsDir string // extra list files
}

// Register declares emailcheck's own variables.
func (c *Config) Register(s *config.Set) {
	s.Int(&c.SMTPPort, "SMTP_PORT", 25, 1, 65535, "port of the mail servers that emailcheck probes")
	c.Proxy = nil
	s.Func("SMTP_PROXY", "", "socks5://[user:pass@]host:port: every SMTP connection goes through this SOCKS5 proxy (DNS stays ours); empty: direct",
		func(v string) (err error) {
			if c.Proxy = nil; v != "" {
				c.Proxy, err = smtpprobe.ParseProxy(v)
			}
			return err
		})
	s.String(&c.HELO, "SMTP_HELO", "", "our name in EHLO; empty: the machine's name when fully qualified, else surveyor.localdomain")
	s.String(&c.From, "SMTP_FROM", "", "reverse path in MAIL FROM; empty: verify@<SMTP_HELO>")
	s.Int(&c.PerServer, "EMAILCHECK_PER_SERVER", 2, 1, 100, "connections per mail server")
	s.Duration(&c.Timeout, "EMAILCHECK_TIMEOUT", 2*time.Minute, "one whole validation")
	s.Duration(&c.ConnectTimeout, "EMAILCHECK_CONNECT_TIMEOUT", 10*time.Second, "TCP connect to a mail server")
	s.Duration(&c.BannerTimeout, "EMAILCHECK_BANNER_TIMEOUT", 30*time.Second, "wait for the 220 greeting")
	s.Duration(&c.CommandTimeout, "EMAILCHECK_COMMAND_TIMEOUT", 30*time.Second, "wait for each SMTP reply")
	s.Duration(&c.IdleTimeout, "EMAILCHECK_IDLE_TIMEOUT", 20*time.Second, "a pooled session is closed after this long unused")
	s.Duration(&c.GreylistRetry, "EMAILCHECK_GREYLIST_RETRY", 0,
		"empty: off; else ask a greylisting server once more after this delay if the validation's time allows")
	s.String(&c.ListsDir, "EMAILCHECK_LISTS_DIR", "", "directory of extra disposable, free-provider and role-account lists")
}

// Validate checks the SMTP identity and the lists directory.
func (c *Config) Validate() error {
	var errs []error
	helo, from := c.identity()
	if v := syntax.Parse("x@" + helo); !v.Valid {
		errs = append(errs, config.Errorf("SMTP_HELO", "%q is not a host name: %s", helo, v.Reason))
	}
	if v := syntax.Parse(from); !v.Valid {
		errs = append(errs, config.Errorf("SMTP_FROM", "%q is not an email address: %s", from, v.Reason))
	}
	if c.ListsDir != "" {
		if st, err := os.Stat(c.ListsDir); err != nil || !st.IsDir() {
			errs = append(errs, config.Errorf("EMAILCHECK_LISTS_DIR", "%q is not a readable directory", c.ListsDir))
		}
	}
	return errors.Join(errs...)
}

// identity is the EHLO name and MAIL FROM address, defaults filled in.
func (c *Config) identity() (helo, from string) {
	helo, from = c.HELO, c.From
	if helo == "" {
		helo = defaultHELO()
	}
	if from == "" {
		from = "verify@" + helo
	}
	return helo, from
}

// defaultHELO is the machine's name when it is fully qualified; mail
// servers expect a domain in EHLO (RFC 5321 4.1.1.1).
func defaultHELO() string {
	if h, err := os.Hostname(); err == nil && strings.Contains(h, ".") && syntax.Parse("x@"+h).Valid {
		return strings.ToLower(h)
	}
	return "surveyor.localdomain"
}
