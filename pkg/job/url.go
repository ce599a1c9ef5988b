package job

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"

	"github.com/surveyor/surveyor/pkg/netguard"
)

// URL errors. Their text completes a sentence about the field: "url must
// not be empty".
var (
	ErrScheme    = errors.New("scheme must be http or https")
	errEmpty     = errors.New("must not be empty")
	errURLLength = fmt.Errorf("must be at most %d characters", MaxURLLength)
	errCanonLong = fmt.Errorf("must be at most %d characters once normalized", MaxURLLength)
	errNotURL    = errors.New("is not a valid URL")
	errUserInfo  = errors.New("must not contain user info")
	errNoHost    = errors.New("must have a host")
	errPort      = errors.New("has an invalid port")
	errHostName  = errors.New("has an invalid host name")
	errPrivate   = errors.New("refers to a non-public address")
)

// Host names are converted to punycode (UTS 46, non-transitional, with the
// bidi rule) by one of two profiles, chosen by where the URL comes from:
//
//   - a job's target must be a DNS host name: letters, digits and hyphens
//     (STD3 rules and hyphen checks). It is what a scan or a crawl looks
//     up, and a name no resolver takes is a clear 400 rather than a
//     failed job;
//   - a link found on a crawled page is read as browsers read it (the URL
//     Standard's domain-to-ASCII: underscores allowed, no hyphen checks),
//     so a link to "my_host.example" is seen, and counted, not dropped.
var (
	targetHosts = idna.New(idna.MapForLookup(), idna.Transitional(false), idna.BidiRule())
	linkHosts   = idna.New(idna.MapForLookup(), idna.StrictDomainName(false), idna.CheckHyphens(false),
		idna.Transitional(false), idna.BidiRule())
)

// forbiddenHost holds the characters no host name may hold once converted
// (the URL Standard's forbidden domain code points, C0 controls aside).
const forbiddenHost = " #%/:<>?@[\\]^|\x7f"

// schemePrefix matches "name:" at the start of a string: a scheme unless
// what follows is a port ("example.com:8080").
var schemePrefix = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)

// loopback is where a localhost name leads (RFC 6761 6.3).
var loopback = netip.AddrFrom4([4]byte{127, 0, 0, 1})

// ParseTarget returns the canonical form of a job's target URL (contract
// §3): http or https (https:// when no scheme is given), a host (IDN in
// punycode, lower case), no user info, no fragment, the default port
// dropped, an empty path written "/", at most MaxURLLength characters as
// sent and once canonical, and no loopback, private or otherwise
// non-public IP literal nor localhost name unless targets allows it (the
// policy the workers' dialers apply too). Ingest applies it; workers take
// the result as it is.
func ParseTarget(raw string, targets netguard.Policy) (string, error) {
	if utf8.RuneCountInString(raw) > MaxURLLength {
		return "", errURLLength
	}
	s := strings.TrimSpace(raw)
	if s == "" {
		return "", errEmpty
	}
	if !strings.Contains(s, "://") {
		if m := schemePrefix.FindString(s); m != "" && !startsWithPort(s[len(m):]) {
			return "", ErrScheme
		}
		s = "https://" + s
	}
	u, addr, err := parseHTTP(s, nil, targetHosts)
	if err != nil {
		return "", err
	}
	host := u.Hostname()
	localName := host == "localhost" || strings.HasSuffix(host, ".localhost")
	if addr.IsValid() && !targets.Allows(addr.Unmap()) || localName && !targets.Allows(loopback) {
		return "", errPrivate
	}
	if u.Path == "" && u.RawPath == "" {
		u.Path = "/"
	}
	out := u.String()
	if len(out) > MaxURLLength {
		return "", errCanonLong
	}
	return out, nil
}

// ParseLink reads a link as a crawler follows it: ref resolved against
// base (nil when ref is absolute), http or https only (ErrScheme
// otherwise), with the authority in canonical form as ParseTarget makes
// it. Path and query are left as written, for the crawler's own
// normalization.
func ParseLink(ref string, base *url.URL) (*url.URL, error) {
	u, _, err := parseHTTP(ref, base, linkHosts)
	return u, err
}

// parseHTTP is the one URL parser of Surveyor. It returns ref, resolved
// against base when base is not nil, as an absolute http or https URL with
// a lower-case scheme, no user info, no fragment, and an authority in
// canonical form: an IP literal as netip writes it (zones refused), a host
// name through hosts in lower-case punycode without its trailing dot, a
// port from 1 to 65535 without leading zeros, dropped when it is the
// scheme's default. addr is the host when it is an IP literal.
func parseHTTP(ref string, base *url.URL, hosts *idna.Profile) (u *url.URL, addr netip.Addr, err error) {
	u, err = url.Parse(ref)
	if err != nil {
		return nil, addr, errNotURL
	}
	if base != nil {
		u = base.ResolveReference(u)
	}
	u.Scheme = strings.ToLower(u.Scheme)
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, addr, ErrScheme
	}
	if u.User != nil {
		return nil, addr, errUserInfo
	}
	host := strings.TrimSuffix(u.Hostname(), ".")
	if host == "" {
		return nil, addr, errNoHost
	}
	port := u.Port()
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return nil, addr, errPort
		}
		port = strconv.Itoa(n)
		if (u.Scheme == "https" && n == 443) || (u.Scheme == "http" && n == 80) {
			port = ""
		}
	}
	if ipLike(host) {
		if addr, err = netip.ParseAddr(host); err != nil {
			return nil, addr, errHostName
		}
		if addr.Zone() != "" {
			return nil, addr, errHostName
		}
		host = addr.String()
	} else if lower := strings.ToLower(host); plainHost(lower) {
		host = lower
	} else {
		ascii, err := hosts.ToASCII(host)
		if err != nil || ascii == "" || strings.ContainsAny(ascii, forbiddenHost) || hasControl(ascii) {
			return nil, addr, errHostName
		}
		host = strings.ToLower(ascii)
	}
	switch {
	case port != "":
		u.Host = net.JoinHostPort(host, port)
	case addr.Is6():
		u.Host = "[" + host + "]"
	default:
		u.Host = host
	}
	u.Fragment, u.RawFragment = "", ""
	return u, addr, nil
}

// plainHost reports whether host is already what both profiles make of it
// (once lower-cased, as they also do): lower-case letters, digits and
// hyphens in non-empty labels that neither start nor end with a hyphen and
// hold no "--" (so no punycode to check). Most hosts a crawl meets are,
// and the profiles cost about half a microsecond to say so.
func plainHost(host string) bool {
	label := 0 // length of the label so far
	for i := 0; i < len(host); i++ {
		switch c := host[i]; {
		case c >= 'a' && c <= 'z' || c >= '0' && c <= '9':
			label++
		case c == '-':
			if label == 0 || i+1 == len(host) || host[i+1] == '-' || host[i+1] == '.' {
				return false
			}
			label++
		case c == '.':
			if label == 0 {
				return false
			}
			label = 0
		default:
			return false
		}
	}
	return label > 0
}

// ipLike reports whether host must be an IP literal: IPv6 holds a colon,
// which no name does; and browsers and inet_aton read digits and dots as
// IPv4 even in forms netip refuses (127.1, 0177.0.0.1), so such a host is
// refused rather than looked up as a name.
func ipLike(host string) bool {
	digitsAndDots := true
	for i := 0; i < len(host); i++ {
		switch c := host[i]; {
		case c == ':':
			return true
		case c != '.' && (c < '0' || c > '9'):
			digitsAndDots = false
		}
	}
	return digitsAndDots
}

func hasControl(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 {
			return true
		}
	}
	return false
}

func startsWithPort(rest string) bool {
	i := 0
	for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
		i++
	}
	return i > 0 && (i == len(rest) || rest[i] == '/' || rest[i] == '?' || rest[i] == '#')
}
