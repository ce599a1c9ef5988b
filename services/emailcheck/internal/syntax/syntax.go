// Package syntax decides whether a string is an email address that mail
// systems accept (the RFC 5321/5322 addr-spec, with RFC 6531 UTF-8 local
// parts), and says why not when it is not. Everything later in a validation
// (DNS, SMTP) relies on its normalized form.
package syntax

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"

	"github.com/surveyor/surveyor/pkg/job"
)

// Length limits in octets: RFC 5321 4.5.3.1.1 (local part) and the 256-octet
// path minus its angle brackets (RFC 5321 4.5.3.1.3, errata 1690).
const (
	MaxLocal   = 64
	MaxAddress = 254
	maxDomain  = 253
	maxLabel   = 63
)

// idnaProfile maps a domain the way a resolver would look it up (UTS 46,
// non-transitional, with the bidi rule) and converts it to A-labels.
var idnaProfile = idna.New(
	idna.MapForLookup(),
	idna.BidiRule(),
	idna.Transitional(false),
	idna.VerifyDNSLength(true),
)

// Parse checks addr. Surrounding white space is ignored; everything else
// must be part of the address. The local part is kept as written (mailbox
// names may be case-sensitive), the domain is lower-cased and in punycode.
func Parse(addr string) job.EmailSyntax {
	addr = strings.TrimSpace(addr)
	r := job.EmailSyntax{}
	fail := func(format string, args ...any) job.EmailSyntax {
		r.Valid, r.Normalized = false, ""
		r.Reason = fmt.Sprintf(format, args...)
		return r
	}
	if addr == "" {
		return fail("empty address")
	}
	if !utf8.ValidString(addr) {
		return fail("not valid UTF-8")
	}
	at := strings.LastIndexByte(addr, '@')
	if at < 0 {
		return fail("missing @")
	}
	local, domain := addr[:at], addr[at+1:]
	r.LocalPart, r.Domain = local, domain
	if local == "" {
		return fail("empty local part")
	}
	if domain == "" {
		return fail("empty domain")
	}
	utf8Local, reason := checkLocal(local)
	if reason != "" {
		return fail("%s", reason)
	}
	r.SMTPUTF8 = utf8Local
	if len(local) > MaxLocal {
		return fail("local part is %d octets, more than %d", len(local), MaxLocal)
	}
	ascii, reason := checkDomain(domain)
	if reason != "" {
		return fail("%s", reason)
	}
	r.Domain = ascii
	r.Normalized = local + "@" + ascii
	if len(r.Normalized) > MaxAddress {
		return fail("address is %d octets, more than %d", len(r.Normalized), MaxAddress)
	}
	r.Valid = true
	return r
}

// checkLocal validates a dot-atom or quoted-string local part and reports
// whether it needs SMTPUTF8.
func checkLocal(s string) (needsUTF8 bool, reason string) {
	if s[0] == '"' {
		return checkQuoted(s)
	}
	if s[0] == '.' {
		return false, "local part starts with a dot"
	}
	if s[len(s)-1] == '.' {
		return false, "local part ends with a dot"
	}
	if strings.Contains(s, "..") {
		return false, "local part has two dots in a row"
	}
	for _, c := range s {
		switch {
		case c >= utf8.RuneSelf:
			if !printableUTF8(c) {
				return false, fmt.Sprintf("character %U is not allowed in the local part", c)
			}
			needsUTF8 = true
		case c == '.' || isAtext(byte(c)):
		case c == '"' || c == '\\':
			return false, "quotes and backslashes need a quoted local part"
		default:
			return false, fmt.Sprintf("character %q is not allowed in an unquoted local part", c)
		}
	}
	return needsUTF8, ""
}

// checkQuoted validates a quoted-string local part ("john doe"@example.com):
// printable characters and spaces, with \ escaping one character.
func checkQuoted(s string) (needsUTF8 bool, reason string) {
	if len(s) < 2 || s[len(s)-1] != '"' {
		return false, "unterminated quoted local part"
	}
	body := s[1 : len(s)-1]
	escaped := false
	for _, c := range body {
		switch {
		case c >= utf8.RuneSelf:
			if !printableUTF8(c) {
				return false, fmt.Sprintf("character %U is not allowed in the local part", c)
			}
			needsUTF8 = true
			escaped = false
		case c < 0x20 && c != '\t' || c == 0x7f:
			return false, "control character in the quoted local part"
		case escaped:
			escaped = false
		case c == '\\':
			escaped = true
		case c == '"':
			return false, "unescaped quote inside the quoted local part"
		}
	}
	if escaped {
		return false, "quoted local part ends with a backslash"
	}
	return needsUTF8, ""
}

// isAtext reports the ASCII characters of RFC 5322 atext.
func isAtext(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-/=?^_`{|}~", c) >= 0
}

// printableUTF8 admits non-ASCII letters, marks, numbers and symbols
// (RFC 6532 UTF8-non-ascii), but not invisible controls or separators.
func printableUTF8(c rune) bool {
	if c == utf8.RuneError || c >= 0x80 && c < 0xa0 {
		return false
	}
	switch c {
	case 0x00a0, 0x1680, 0x2028, 0x2029, 0x200b, 0xfeff, 0x3000:
		return false
	}
	return !(c >= 0x2000 && c <= 0x200a)
}

// checkDomain returns the lower-case A-label form of a host name domain.
func checkDomain(d string) (ascii, reason string) {
	if d[0] == '[' {
		return "", "address literals such as [192.0.2.1] are not accepted for delivery checks"
	}
	if strings.HasSuffix(d, ".") {
		return "", "domain ends with a dot"
	}
	if strings.HasPrefix(d, ".") {
		return "", "domain starts with a dot"
	}
	if strings.Contains(d, "..") {
		return "", "domain has an empty label"
	}
	for _, c := range d {
		if c < utf8.RuneSelf && !isLDH(byte(c)) && c != '.' || c >= utf8.RuneSelf && !printableUTF8(c) {
			return "", fmt.Sprintf("character %q is not allowed in a domain", c)
		}
	}
	if isASCII(d) { // precise reasons before idna's generic ones
		if reason := checkLabels(d); reason != "" {
			return "", reason
		}
	}
	a, err := idnaProfile.ToASCII(d)
	if err != nil {
		return "", "domain is not a valid internationalized name: " + err.Error()
	}
	a = strings.ToLower(a)
	if len(a) > maxDomain {
		return "", fmt.Sprintf("domain is %d octets, more than %d", len(a), maxDomain)
	}
	if reason := checkLabels(a); reason != "" {
		return "", reason
	}
	for i := 0; i < len(a); i++ {
		if !isLDH(a[i]) && a[i] != '.' {
			return "", fmt.Sprintf("character %q is not allowed in a domain", a[i])
		}
	}
	return a, ""
}

// checkLabels applies the host name rules that hold before and after
// punycode conversion: two or more labels of 1..63 octets, no hyphen at
// either end, a top-level domain that is not all digits.
func checkLabels(d string) string {
	labels := strings.Split(d, ".")
	if len(labels) < 2 {
		return "domain needs at least two labels (a name and a top-level domain)"
	}
	for _, l := range labels {
		switch {
		case l == "":
			return "domain has an empty label"
		case len(l) > maxLabel:
			return fmt.Sprintf("domain label %q is longer than %d octets", l, maxLabel)
		case l[0] == '-' || l[len(l)-1] == '-':
			return fmt.Sprintf("domain label %q starts or ends with a hyphen", l)
		}
	}
	if strings.Trim(labels[len(labels)-1], "0123456789") == "" {
		return "top-level domain is numeric"
	}
	return ""
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func isLDH(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-'
}
