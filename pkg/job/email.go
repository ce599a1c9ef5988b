package job

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

var errEmailLength = fmt.Errorf("must be at most %d characters", MaxEmailLength)

// NormalizeEmail returns the canonical form of an email target (contract
// §3). Any string of 1 to MaxEmailLength characters is one: bad syntax is
// the job's result (reachable "invalid"), not a refused request. White
// space around the address is dropped, unless there is nothing else, and
// the domain (after the last @) is lower-cased.
func NormalizeEmail(raw string) (string, error) {
	switch n := utf8.RuneCountInString(raw); {
	case n == 0:
		return "", errEmpty
	case n > MaxEmailLength:
		return "", errEmailLength
	}
	s := strings.TrimSpace(raw)
	if s == "" {
		return raw, nil
	}
	if at := strings.LastIndexByte(s, '@'); at >= 0 {
		s = s[:at+1] + strings.ToLower(s[at+1:])
	}
	return s, nil
}

// EmailResult is the result document of an email validation (contract §4).
type EmailResult struct {
	Reachable Reachable   `json:"reachable"`
	Syntax    EmailSyntax `json:"syntax"`
	DNS       EmailDNS    `json:"dns"`
	SMTP      EmailSMTP   `json:"smtp"`
	Misc      EmailMisc   `json:"misc"`
}

// Reachable is the verdict of a validation.
type Reachable string

const (
	ReachableSafe    Reachable = "safe"    // accepted, and nothing below
	ReachableRisky   Reachable = "risky"   // accepted but catch-all, disposable, role account or full inbox
	ReachableInvalid Reachable = "invalid" // bad syntax, no such domain, no mail host, null MX, recipient refused
	ReachableUnknown Reachable = "unknown" // no answer, timeout, greylisting or a refused probe
)

// Enum lists the verdicts.
func (Reachable) Enum() []string {
	return enum([]Reachable{ReachableSafe, ReachableRisky, ReachableInvalid, ReachableUnknown})
}

// EmailSyntax is the "syntax" part: the address as mail systems read it.
type EmailSyntax struct {
	Valid      bool   `json:"valid"`
	LocalPart  string `json:"local_part"`
	Domain     string `json:"domain"`
	Normalized string `json:"normalized"`
	Reason     string `json:"reason,omitempty"`
	// SMTPUTF8 marks a local part with non-ASCII characters: only servers
	// that offer the SMTPUTF8 extension (RFC 6531) can take it.
	SMTPUTF8 bool `json:"smtputf8,omitempty"`
}

// EmailDNS is the "dns" part: where mail for the domain goes.
type EmailDNS struct {
	HasMX     bool   `json:"has_mx"`
	MX        []MX   `json:"mx"`
	NullMX    bool   `json:"null_mx"`
	FallbackA bool   `json:"fallback_a"`
	Error     string `json:"error,omitempty"`
}

// EmailSMTP is the "smtp" part: what the mail server said.
type EmailSMTP struct {
	Checked      bool   `json:"checked"`
	CanConnect   bool   `json:"can_connect"`
	Deliverable  bool   `json:"deliverable"`
	CatchAll     bool   `json:"catch_all"`
	FullInbox    bool   `json:"full_inbox"`
	Disabled     bool   `json:"disabled"`
	Code         int    `json:"code"`
	EnhancedCode string `json:"enhanced_code,omitempty"`
	Message      string `json:"message,omitempty"`
	MXHost       string `json:"mx_host,omitempty"`
	Error        string `json:"error,omitempty"`
}

// EmailMisc is the "misc" part: what lists say of the address.
type EmailMisc struct {
	Disposable   bool   `json:"disposable"`
	RoleAccount  bool   `json:"role_account"`
	FreeProvider bool   `json:"free_provider"`
	Suggestion   string `json:"suggestion,omitempty"` // the address with a common mistyped domain corrected
}

// EmailProgress is a running validation's progress document.
type EmailProgress struct {
	Stage string `json:"stage"`
}
