package crawl

import (
	"net/netip"
	"strings"

	"github.com/surveyor/surveyor/pkg/job"
)

// Trap limits: URLs past them are never fetched.
const (
	maxSegRepeats  = 3 // a path segment seen a fourth time: /a/b/a/b/a/b/a/...
	maxPathSegs    = 32
	maxQueryParams = 16   // ever-growing query strings
	maxKeyRepeats  = 2    // ?p=1&p=2&p=3
	maxQueryLen    = 1024 // bytes after '?'
)

// origin returns "scheme://host[:port]" of a normalized URL and the rest
// (its request URI).
func origin(u string) (string, string) {
	i := strings.Index(u, "://")
	if i < 0 {
		return u, "/"
	}
	j := strings.IndexByte(u[i+3:], '/')
	if j < 0 {
		return u, "/"
	}
	return u[:i+3+j], u[i+3+j:]
}

// twin returns the origin of the www. twin of an origin's host ("" for an
// IP literal, which has none).
func twin(o string) string {
	i := strings.Index(o, "://")
	scheme, hostport := o[:i+3], o[i+3:]
	host, port := hostport, ""
	if k := strings.LastIndexByte(hostport, ':'); k >= 0 && !strings.Contains(hostport[k:], "]") {
		host, port = hostport[:k], hostport[k:]
	}
	if strings.HasPrefix(host, "[") {
		return ""
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return ""
	}
	if rest, ok := strings.CutPrefix(host, "www."); ok {
		return scheme + rest + port
	}
	return scheme + "www." + host + port
}

// hostOf returns the host of an origin, without scheme and port.
func hostOf(o string) string {
	h := o[strings.Index(o, "://")+3:]
	if k := strings.LastIndexByte(h, ':'); k >= 0 && !strings.Contains(h[k:], "]") {
		h = h[:k]
	}
	return h
}

// trap names the reason a normalized URL looks like a crawler trap, or "".
func trap(u string) string {
	if len(u) > job.MaxURLLength {
		return "URL too long"
	}
	_, uri := origin(u)
	path, query, _ := strings.Cut(uri, "?")
	if repeatedSegments(path) {
		return "repeating path segments"
	}
	if len(query) > maxQueryLen {
		return "query too long"
	}
	if query != "" {
		params := strings.Split(query, "&")
		if len(params) > maxQueryParams {
			return "too many query parameters"
		}
		for i, p := range params {
			k, _, _ := strings.Cut(p, "=")
			n := 0
			for _, q := range params[i:] {
				if qk, _, _ := strings.Cut(q, "="); qk == k {
					n++
				}
			}
			if n > maxKeyRepeats {
				return "repeated query parameter"
			}
		}
	}
	return ""
}

// repeatedSegments reports a path that repeats one segment more than
// maxSegRepeats times or has more than maxPathSegs segments: the shape
// relative-link loops (/a/b/b/b/) and path-based session traps grow into.
func repeatedSegments(path string) bool {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	if len(segs) > maxPathSegs {
		return true
	}
	for i, s := range segs {
		if s == "" {
			continue
		}
		n := 0
		for _, t := range segs[i:] {
			if t == s {
				n++
			}
		}
		if n > maxSegRepeats {
			return true
		}
	}
	return false
}
