package smtpprobe

import "strings"

// Class is what a RCPT TO reply says about the mailbox.
type Class int

const (
	// Unknown: no usable answer (unexpected code).
	Unknown Class = iota
	// Accepted: 2xx, the server takes mail for the address.
	Accepted
	// NoSuchUser: a permanent refusal of the recipient (5.1.x or a plain 5xx).
	NoSuchUser
	// MailboxFull: 552 or x.2.2, the mailbox exists but is over quota.
	MailboxFull
	// Disabled: 5.2.1, the mailbox exists but takes no mail.
	Disabled
	// Temporary: 4xx, try later; the answer says nothing yet.
	Temporary
	// Greylisted: a 4xx that names greylisting (or 4.7.1 / 4.7.0 "try again").
	Greylisted
	// Blocked: a refusal aimed at us, not the mailbox (5.7.x policy, block
	// lists). It says nothing about the address.
	Blocked
)

func (c Class) String() string {
	return [...]string{"unknown", "accepted", "no such user", "mailbox full", "disabled",
		"temporary failure", "greylisted", "blocked by policy"}[c]
}

// blockWords mark a plain 5xx that refuses the sender (its IP, its
// reputation) rather than the recipient.
var blockWords = []string{"block", "blacklist", "spamhaus", "dnsbl", "reputation", "policy", "banned"}

// Classify reads a RCPT TO reply. Enhanced codes (RFC 3463) decide when
// present; plain codes and a few words decide otherwise.
func Classify(r Reply) Class {
	e := r.Enhanced
	switch {
	case r.Code/100 == 2:
		return Accepted
	case strings.HasSuffix(e, ".2.2") || r.Code == 552 && !strings.HasPrefix(e, "5.1."):
		return MailboxFull
	case e == "5.2.1":
		return Disabled
	case r.Code/100 == 4:
		msg := strings.ToLower(r.Message)
		if strings.Contains(msg, "greylist") || strings.Contains(msg, "graylist") ||
			e == "4.7.1" || e == "4.7.0" || r.Code == 450 && strings.Contains(msg, "try again") {
			return Greylisted
		}
		return Temporary
	case r.Code/100 == 5:
		if strings.HasPrefix(e, "5.1.") {
			return NoSuchUser
		}
		if strings.HasPrefix(e, "5.7.") {
			return Blocked
		}
		msg := strings.ToLower(r.Message)
		for _, w := range blockWords {
			if strings.Contains(msg, w) {
				return Blocked
			}
		}
		return NoSuchUser
	}
	return Unknown
}
