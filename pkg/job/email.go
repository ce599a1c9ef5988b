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
