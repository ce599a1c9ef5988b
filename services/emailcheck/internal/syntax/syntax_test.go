package syntax

import (
	"strings"
	"testing"
)

func TestParseValid(t *testing.T) {
	cases := []struct {
		in, normalized string
		utf8           bool
	}{
		{"user@example.com", "user@example.com", false},
		{"User@Example.COM", "User@example.com", false},
		{"  padded@example.com\t", "padded@example.com", false},
		{"first.last@example.com", "first.last@example.com", false},
		{"a@b.co", "a@b.co", false},
		{"x@example.museum", "x@example.museum", false},
		{"user+tag@example.com", "user+tag@example.com", false},
		{"user-name@example.com", "user-name@example.com", false},
		{"user_name@example.com", "user_name@example.com", false},
		{"1234567890@example.com", "1234567890@example.com", false},
		{"o'reilly@example.com", "o'reilly@example.com", false},
		{"!#$%&'*+-/=?^_`{|}~@example.com", "!#$%&'*+-/=?^_`{|}~@example.com", false},
		{"a.b.c.d@example.com", "a.b.c.d@example.com", false},
		{"user@sub.domain.example.com", "user@sub.domain.example.com", false},
		{"user@my-domain.example", "user@my-domain.example", false},
		{"user@xn--bcher-kva.example", "user@xn--bcher-kva.example", false},
		{"user@bücher.example", "user@xn--bcher-kva.example", false},
		{"user@BÜCHER.example", "user@xn--bcher-kva.example", false},
		{"user@例え.テスト", "user@xn--r8jz45g.xn--zckzah", false},
		{"user@münchen.de", "user@xn--mnchen-3ya.de", false},
		{"用户@example.com", "用户@example.com", true},
		{"josé@example.com", "josé@example.com", true},
		{"δοκιμή@παράδειγμα.δοκιμή", "δοκιμή@xn--hxajbheg2az3al.xn--jxalpdlp", true},
		{`"john doe"@example.com`, `"john doe"@example.com`, false},
		{`"john..doe"@example.com`, `"john..doe"@example.com`, false},
		{`".leading"@example.com`, `".leading"@example.com`, false},
		{`"a@b"@example.com`, `"a@b"@example.com`, false},
		{`"quote\"inside"@example.com`, `"quote\"inside"@example.com`, false},
		{`"back\\slash"@example.com`, `"back\\slash"@example.com`, false},
		{`""@example.com`, `""@example.com`, false},
		{"user@123.example", "user@123.example", false},
		{"user@example.x1", "user@example.x1", false},
		{strings.Repeat("a", 64) + "@example.com", strings.Repeat("a", 64) + "@example.com", false},
		{"u@" + strings.Repeat("a", 63) + ".com", "u@" + strings.Repeat("a", 63) + ".com", false},
		{longAddress(254), longAddress(254), false},
	}
	for _, c := range cases {
		r := Parse(c.in)
		if !r.Valid {
			t.Errorf("Parse(%q) invalid: %s", c.in, r.Reason)
			continue
		}
		if r.Normalized != c.normalized {
			t.Errorf("Parse(%q).Normalized = %q, want %q", c.in, r.Normalized, c.normalized)
		}
		if r.SMTPUTF8 != c.utf8 {
			t.Errorf("Parse(%q).SMTPUTF8 = %v, want %v", c.in, r.SMTPUTF8, c.utf8)
		}
		at := strings.LastIndexByte(r.Normalized, '@')
		if r.LocalPart != r.Normalized[:at] || r.Domain != r.Normalized[at+1:] {
			t.Errorf("Parse(%q) parts %q %q disagree with %q", c.in, r.LocalPart, r.Domain, r.Normalized)
		}
		if r.Reason != "" {
			t.Errorf("Parse(%q) valid but has reason %q", c.in, r.Reason)
		}
	}
}

func TestParseInvalid(t *testing.T) {
	cases := []struct{ in, reason string }{
		{"", "empty address"},
		{"   ", "empty address"},
		{"\n", "empty address"}, // ingest takes any string of 1..320 characters
		{"plainaddress", "missing @"},
		{"@example.com", "empty local part"},
		{"user@", "empty domain"},
		{".user@example.com", "starts with a dot"},
		{"user.@example.com", "ends with a dot"},
		{"us..er@example.com", "two dots"},
		{"us er@example.com", "not allowed in an unquoted"},
		{"us,er@example.com", "not allowed in an unquoted"},
		{"us(er)@example.com", "not allowed in an unquoted"},
		{"us[er]@example.com", "not allowed in an unquoted"},
		{"us:er@example.com", "not allowed in an unquoted"},
		{"us;er@example.com", "not allowed in an unquoted"},
		{"us<er@example.com", "not allowed in an unquoted"},
		{`us"er@example.com`, "quoted local part"},
		{`us\er@example.com`, "quoted local part"},
		{"a@b@example.com", "not allowed in an unquoted"},
		{"user\x00@example.com", "not allowed"},
		{"us\u200ber@example.com", "not allowed in the local part"},
		{"\xffuser@example.com", "UTF-8"},
		{`"unterminated@example.com`, "unterminated"},
		{`"bad"quote"@example.com`, "unescaped quote"},
		{`"ends\"@example.com`, "ends with a backslash"},
		{"\"ctl\x01\"@example.com", "control character"},
		{strings.Repeat("a", 65) + "@example.com", "more than 64"},
		{longAddress(255), "more than 254"},
		{"user@localhost", "at least two labels"},
		{"user@example", "at least two labels"},
		{"user@.example.com", "starts with a dot"},
		{"user@example.com.", "ends with a dot"},
		{"user@exa..mple.com", "empty label"},
		{"user@-example.com", "hyphen"},
		{"user@example-.com", "hyphen"},
		{"user@exa_mple.com", "not allowed in a domain"},
		{"user@exa mple.com", "not allowed in a domain"},
		{"user@example.com>", "not allowed in a domain"},
		{"user@" + strings.Repeat("a", 64) + ".com", "longer than 63"},
		{"user@192.168.0.1", "numeric"},
		{"user@example.123", "numeric"},
		{"user@[192.0.2.1]", "address literals"},
		{"user@[IPv6:2001:db8::1]", "address literals"},
		{"user@xn--a.example", "internationalized"},
		{"user@exam\u200bple.com", "not allowed in a domain"},
	}
	for _, c := range cases {
		r := Parse(c.in)
		if r.Valid {
			t.Errorf("Parse(%q) valid, want invalid (%s)", c.in, c.reason)
			continue
		}
		if !strings.Contains(r.Reason, c.reason) {
			t.Errorf("Parse(%q).Reason = %q, want it to mention %q", c.in, r.Reason, c.reason)
		}
		if r.Normalized != "" {
			t.Errorf("Parse(%q) invalid but normalized to %q", c.in, r.Normalized)
		}
	}
}

// longAddress builds a syntactically valid address of exactly n octets.
func longAddress(n int) string {
	local := strings.Repeat("l", 64)
	rest := n - len(local) - 1 // octets for the domain
	var labels []string
	for rest > 0 {
		l := min(rest, 63)
		if rest-l == 1 { // avoid leaving a single octet for a dot and nothing
			l--
		}
		labels = append(labels, strings.Repeat("d", l))
		rest -= l + 1
	}
	labels[len(labels)-1] = "c" + labels[len(labels)-1][1:]
	return local + "@" + strings.Join(labels, ".")
}

func TestLongAddressHelper(t *testing.T) {
	for _, n := range []int{254, 255} {
		if got := len(longAddress(n)); got != n {
			t.Fatalf("longAddress(%d) has %d octets", n, got)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"user@example.com", `"a b"@x.org`, "用户@例え.テスト", "a@b@c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r := Parse(s)
		if !r.Valid {
			if r.Reason == "" {
				t.Fatalf("Parse(%q) invalid without a reason", s)
			}
			return
		}
		if len(r.Normalized) > MaxAddress || len(r.LocalPart) > MaxLocal {
			t.Fatalf("Parse(%q) accepted an over-long address", s)
		}
		if again := Parse(r.Normalized); !again.Valid || again.Normalized != r.Normalized {
			t.Fatalf("normalized form %q does not parse to itself: %+v", r.Normalized, again)
		}
	})
}
