// Package validate turns the JSON bodies of ingest's POST requests into
// normalized job requests, collecting every bad field so that one answer
// lists all of them.
package validate

import (
	"net"
	"net/netip"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"golang.org/x/net/idna"

	"github.com/surveyor/surveyor/pkg/netguard"
)

// MaxURLLength is the longest URL accepted, before and after normalization.
const MaxURLLength = 2048

// schemePrefix matches "name:" at the start of a string: a scheme unless
// what follows is a port ("example.com:8080").
var schemePrefix = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)

// hostProfile converts IDN labels to punycode the way browsers look hosts up.
var hostProfile = idna.New(idna.MapForLookup(), idna.Transitional(false), idna.BidiRule())

// URL normalizes a target URL as the contract says: http or https (https://
// when no scheme is given), a host (IDN in punycode, lower case), no user
// info, no fragment, default port dropped, at most 2048 characters, and no
// IP literal outside the public ranges unless allowPrivate.
func URL(raw string, allowPrivate bool) (string, string) {
	s := strings.TrimSpace(raw)
	switch {
	case s == "":
		return "", "must not be empty"
	case len(s) > MaxURLLength:
		return "", "must be at most 2048 characters"
	}
	if !strings.Contains(s, "://") {
		if m := schemePrefix.FindString(s); m != "" && !startsWithPort(s[len(m):]) {
			return "", "scheme must be http or https"
		}
		s = "https://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", "is not a valid URL"
	}
	u.Scheme = strings.ToLower(u.Scheme)
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", "scheme must be http or https"
	}
	if u.User != nil {
		return "", "must not contain user info"
	}
	host := u.Hostname()
	if host == "" {
		return "", "must have a host"
	}
	port := u.Port()
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return "", "has an invalid port"
		}
		if (u.Scheme == "https" && n == 443) || (u.Scheme == "http" && n == 80) {
			port = ""
		}
	}
	if addr, err := netip.ParseAddr(host); err == nil {
		if !allowPrivate && !netguard.IsPublic(addr.Unmap()) {
			return "", "refers to a non-public address"
		}
		host = addr.String()
	} else {
		ascii, err := hostProfile.ToASCII(strings.TrimSuffix(host, "."))
		if err != nil || ascii == "" || strings.ContainsAny(ascii, " _/\\") {
			return "", "has an invalid host name"
		}
		host = strings.ToLower(ascii)
		if !allowPrivate && (host == "localhost" || strings.HasSuffix(host, ".localhost")) {
			return "", "refers to a non-public address"
		}
	}
	if port != "" {
		u.Host = net.JoinHostPort(host, port)
	} else if strings.Contains(host, ":") {
		u.Host = "[" + host + "]"
	} else {
		u.Host = host
	}
	u.Fragment, u.RawFragment = "", ""
	if u.Path == "" && u.RawPath == "" {
		u.Path = "/"
	}
	out := u.String()
	if len(out) > MaxURLLength {
		return "", "must be at most 2048 characters once normalized"
	}
	return out, ""
}

func startsWithPort(rest string) bool {
	i := 0
	for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
		i++
	}
	return i > 0 && (i == len(rest) || rest[i] == '/' || rest[i] == '?' || rest[i] == '#')
}
