// Package normalize gives every URL of a crawl one spelling, so that links
// written differently (HOST case, :80, ./, %7E, #fragments, session ids)
// lead to one fetch. The URL itself is read by job.ParseLink, the parser
// ingest's targets go through too; what is here is the crawl's own rules
// for paths and queries.
package normalize

import (
	"net/url"
	"strings"

	"github.com/surveyor/surveyor/pkg/job"
)

// sessionParams are query parameters that only carry a session id: two URLs
// that differ in them are the same page.
var sessionParams = map[string]bool{
	"phpsessid": true, "jsessionid": true, "sid": true, "sessionid": true,
	"session_id": true, "sessid": true, "cfid": true, "cftoken": true,
	"aspsessionid": true, "zenid": true, "oscsid": true,
}

// Parse resolves ref against base (nil for an absolute ref) and returns the
// normalized absolute URL. job.ParseLink reads it (http or https only,
// job.ErrScheme otherwise; lower-case scheme and host, IDN host in
// punycode, default port dropped, fragment removed); then the path and
// query get one spelling: dot segments resolved, percent-encoding in one
// form (unreserved characters decoded, hex upper-case, everything else
// encoded), session-id parameters removed, an empty path written as "/".
func Parse(ref string, base *url.URL) (string, error) {
	ref = fixPercent(strings.TrimSpace(ref))
	u, err := job.ParseLink(ref, base)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.Grow(len(ref) + 8)
	b.WriteString(u.Scheme)
	b.WriteString("://")
	b.WriteString(u.Host)
	path := stripPathSession(u.EscapedPath())
	path = removeDotSegments(escape(path, pathChar))
	if path == "" {
		path = "/"
	}
	b.WriteString(path)
	if q := cleanQuery(u.RawQuery); q != "" {
		b.WriteByte('?')
		b.WriteString(q)
	}
	return b.String(), nil
}

func unreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

func subDelim(c byte) bool { return strings.IndexByte("!$&'()*+,;=", c) >= 0 }

// pathChar and queryChar are the bytes RFC 3986 lets stand unescaped.
func pathChar(c byte) bool  { return unreserved(c) || subDelim(c) || c == ':' || c == '@' || c == '/' }
func queryChar(c byte) bool { return pathChar(c) || c == '?' }

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// escape rewrites an escaped URL part in one form: %XX of an unreserved
// byte is decoded, other escapes get upper-case hex, a stray % becomes %25,
// and bytes that allowed does not accept are escaped.
func escape(s string, allowed func(byte) bool) string {
	const hex = "0123456789ABCDEF"
	var b []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' && i+2 < len(s) {
			h, ok1 := unhex(s[i+1])
			l, ok2 := unhex(s[i+2])
			if ok1 && ok2 {
				v := h<<4 | l
				if b == nil {
					b = append(make([]byte, 0, len(s)+8), s[:i]...)
				}
				if unreserved(v) {
					b = append(b, v)
				} else {
					b = append(b, '%', hex[v>>4], hex[v&15])
				}
				i += 2
				continue
			}
		}
		if c != '%' && allowed(c) {
			if b != nil {
				b = append(b, c)
			}
			continue
		}
		if b == nil {
			b = append(make([]byte, 0, len(s)+8), s[:i]...)
		}
		b = append(b, '%', hex[c>>4], hex[c&15])
	}
	if b == nil {
		return s
	}
	return string(b)
}

// fixPercent escapes a % that starts no escape (as browsers read "100%"),
// which net/url would otherwise reject.
func fixPercent(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			continue
		}
		if i+2 < len(s) {
			_, ok1 := unhex(s[i+1])
			_, ok2 := unhex(s[i+2])
			if ok1 && ok2 {
				continue
			}
		}
		s = s[:i] + "%25" + s[i+1:]
	}
	return s
}

// removeDotSegments applies RFC 3986 §5.2.4 to an absolute path.
func removeDotSegments(p string) string {
	if !strings.Contains(p, ".") {
		return p
	}
	segs := strings.Split(p, "/")
	out := make([]string, 0, len(segs))
	for i, s := range segs {
		last := i == len(segs)-1
		switch s {
		case ".":
			if last {
				out = append(out, "")
			}
		case "..":
			if len(out) > 1 {
				out = out[:len(out)-1]
			}
			if last {
				out = append(out, "")
			}
		default:
			out = append(out, s)
		}
	}
	r := strings.Join(out, "/")
	if !strings.HasPrefix(r, "/") {
		r = "/" + r
	}
	return r
}

// stripPathSession removes a ;jsessionid=... path parameter.
func stripPathSession(p string) string {
	i := strings.Index(strings.ToLower(p), ";jsessionid=")
	if i < 0 {
		return p
	}
	end := strings.IndexAny(p[i+1:], ";/")
	if end < 0 {
		return p[:i]
	}
	return p[:i] + p[i+1+end:]
}

// cleanQuery normalizes the escaping of a raw query and drops session-id
// parameters, keeping the order of the rest (servers may care about it).
func cleanQuery(q string) string {
	if q == "" {
		return ""
	}
	parts := strings.Split(q, "&")
	kept := parts[:0]
	for _, p := range parts {
		if p == "" {
			continue
		}
		name := p
		if i := strings.IndexByte(p, '='); i >= 0 {
			name = p[:i]
		}
		if sessionParams[strings.ToLower(name)] {
			continue
		}
		kept = append(kept, escape(p, queryChar))
	}
	return strings.Join(kept, "&")
}
