package inspect

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// The rubric is documented in the README (Security grade); keep the
// two in step.

// Finding is one line of the rubric applied to the page.
type Finding struct {
	Check  string `json:"check"`
	Result string `json:"result"` // pass, partial, fail
	Points int    `json:"points"`
	Max    int    `json:"max"`
	Value  string `json:"value,omitempty"` // the header or setting seen
	Detail string `json:"detail,omitempty"`
}

// CookieFlags is the security view of one Set-Cookie.
type CookieFlags struct {
	Name     string `json:"name"`
	Secure   bool   `json:"secure"`
	HTTPOnly bool   `json:"http_only"`
	SameSite string `json:"same_site"` // lax, strict, none or "" when unset
}

// Security is the "security" section.
type Security struct {
	Grade    string        `json:"grade"`
	Score    int           `json:"score"`
	Findings []Finding     `json:"findings"`
	Cookies  []CookieFlags `json:"cookies"`
	Issues   []string      `json:"issues"`
}

// Page is what the grade is computed from.
type Page struct {
	HTTPS   bool        // the final page came over https
	Header  http.Header // of the final response
	Cookies []*http.Cookie
	// HTTPSRedirect: the plain-http address redirects to https. Nil when
	// it could not be checked.
	HTTPSRedirect *bool
	Markup        Markup
}

// hstsMinAge is the max-age (180 days) below which HSTS earns half marks.
const hstsMinAge = 180 * 24 * 3600

// Grade applies the rubric.
func Grade(p Page) *Security {
	s := &Security{Findings: []Finding{}, Cookies: []CookieFlags{}, Issues: []string{}}
	add := func(f Finding, issue string) {
		s.Findings = append(s.Findings, f)
		s.Score += f.Points
		if f.Result != "pass" && issue != "" {
			s.Issues = append(s.Issues, issue)
		}
	}
	h := p.Header

	if p.HTTPS {
		add(Finding{Check: "https", Result: "pass", Points: 20, Max: 20}, "")
	} else {
		add(Finding{Check: "https", Result: "fail", Max: 20}, "the page is served over plain http")
	}

	switch {
	case p.HTTPSRedirect == nil:
		add(Finding{Check: "https_redirect", Result: "fail", Max: 10, Detail: "could not be checked"}, "the plain-http address could not be checked for a redirect to https")
	case *p.HTTPSRedirect:
		add(Finding{Check: "https_redirect", Result: "pass", Points: 10, Max: 10}, "")
	default:
		add(Finding{Check: "https_redirect", Result: "fail", Max: 10}, "plain http does not redirect to https")
	}

	hsts := h.Get("Strict-Transport-Security")
	switch age, ok := maxAge(hsts); {
	case !p.HTTPS || hsts == "":
		add(Finding{Check: "hsts", Result: "fail", Max: 15, Value: hsts}, "no Strict-Transport-Security header on an https response")
	case !ok || age <= 0:
		add(Finding{Check: "hsts", Result: "fail", Max: 15, Value: hsts, Detail: "no usable max-age"}, "Strict-Transport-Security has no usable max-age")
	case age < hstsMinAge:
		add(Finding{Check: "hsts", Result: "partial", Points: 8, Max: 15, Value: hsts, Detail: "max-age under 180 days"}, "Strict-Transport-Security max-age is under 180 days")
	default:
		add(Finding{Check: "hsts", Result: "pass", Points: 15, Max: 15, Value: hsts}, "")
	}

	csp := h.Get("Content-Security-Policy")
	directives := parseCSP(csp)
	switch {
	case csp == "" && h.Get("Content-Security-Policy-Report-Only") != "":
		add(Finding{Check: "csp", Result: "partial", Points: 3, Max: 15, Value: h.Get("Content-Security-Policy-Report-Only"), Detail: "report-only"}, "Content-Security-Policy is only reported, not enforced")
	case csp == "":
		add(Finding{Check: "csp", Result: "fail", Max: 15}, "no Content-Security-Policy header")
	case unsafeScripts(directives):
		add(Finding{Check: "csp", Result: "partial", Points: 8, Max: 15, Value: csp, Detail: "allows unsafe-inline or unsafe-eval scripts"}, "Content-Security-Policy allows unsafe-inline or unsafe-eval scripts")
	default:
		add(Finding{Check: "csp", Result: "pass", Points: 15, Max: 15, Value: csp}, "")
	}

	xfo := strings.ToUpper(strings.TrimSpace(h.Get("X-Frame-Options")))
	_, ancestors := directives["frame-ancestors"]
	switch {
	case ancestors:
		add(Finding{Check: "frame_options", Result: "pass", Points: 10, Max: 10, Value: "frame-ancestors " + directives["frame-ancestors"]}, "")
	case xfo == "DENY" || xfo == "SAMEORIGIN":
		add(Finding{Check: "frame_options", Result: "pass", Points: 10, Max: 10, Value: xfo}, "")
	default:
		add(Finding{Check: "frame_options", Result: "fail", Max: 10, Value: xfo}, "no X-Frame-Options DENY/SAMEORIGIN or CSP frame-ancestors: the page can be framed")
	}

	if xcto := h.Get("X-Content-Type-Options"); strings.EqualFold(strings.TrimSpace(xcto), "nosniff") {
		add(Finding{Check: "content_type_options", Result: "pass", Points: 10, Max: 10, Value: xcto}, "")
	} else {
		add(Finding{Check: "content_type_options", Result: "fail", Max: 10, Value: xcto}, "no X-Content-Type-Options: nosniff")
	}

	rp := h.Get("Referrer-Policy")
	switch policy := lastPolicy(rp); policy {
	case "no-referrer", "same-origin", "strict-origin", "strict-origin-when-cross-origin", "origin", "origin-when-cross-origin":
		add(Finding{Check: "referrer_policy", Result: "pass", Points: 5, Max: 5, Value: rp}, "")
	case "":
		add(Finding{Check: "referrer_policy", Result: "fail", Max: 5, Value: rp}, "no Referrer-Policy header")
	default:
		add(Finding{Check: "referrer_policy", Result: "fail", Max: 5, Value: rp}, "Referrer-Policy "+policy+" leaks full URLs")
	}

	switch pp, fp := h.Get("Permissions-Policy"), h.Get("Feature-Policy"); {
	case pp != "":
		add(Finding{Check: "permissions_policy", Result: "pass", Points: 5, Max: 5, Value: pp}, "")
	case fp != "":
		add(Finding{Check: "permissions_policy", Result: "partial", Points: 2, Max: 5, Value: fp, Detail: "legacy Feature-Policy"}, "only the legacy Feature-Policy header, no Permissions-Policy")
	default:
		add(Finding{Check: "permissions_policy", Result: "fail", Max: 5}, "no Permissions-Policy header")
	}

	add(gradeCookies(s, p))

	m := p.Markup
	switch {
	case !p.HTTPS:
		add(Finding{Check: "mixed_content", Result: "fail", Max: 5, Detail: "the page itself is not https"}, "")
	case len(m.Active) > 0:
		add(Finding{Check: "mixed_content", Result: "fail", Max: 5, Value: m.Active[0]}, fmt.Sprintf("%d script/style/frame resources load over http (first: %s)", len(m.Active), m.Active[0]))
	case len(m.Passive) > 0 || len(m.Forms) > 0:
		first := append(append([]string{}, m.Passive...), m.Forms...)[0]
		add(Finding{Check: "mixed_content", Result: "partial", Points: 2, Max: 5, Value: first}, fmt.Sprintf("%d images, media or forms use http (first: %s)", len(m.Passive)+len(m.Forms), first))
	default:
		add(Finding{Check: "mixed_content", Result: "pass", Points: 5, Max: 5}, "")
	}

	s.Grade = letter(s.Score)
	return s
}

// gradeCookies lists every cookie's flags and scores them together: 3
// points if all are Secure, 1 if all are HttpOnly, 1 if all set SameSite.
func gradeCookies(s *Security, p Page) (Finding, string) {
	allSecure, allHTTPOnly, allSameSite := true, true, true
	var problems []string
	for _, c := range p.Cookies {
		f := CookieFlags{Name: c.Name, Secure: c.Secure, HTTPOnly: c.HttpOnly, SameSite: sameSite(c.SameSite)}
		s.Cookies = append(s.Cookies, f)
		var missing []string
		if !f.Secure {
			allSecure = false
			missing = append(missing, "Secure")
		}
		if !f.HTTPOnly {
			allHTTPOnly = false
			missing = append(missing, "HttpOnly")
		}
		if f.SameSite == "" {
			allSameSite = false
			missing = append(missing, "SameSite")
		}
		if len(missing) > 0 {
			problems = append(problems, fmt.Sprintf("cookie %s lacks %s", c.Name, strings.Join(missing, ", ")))
		}
	}
	f := Finding{Check: "cookies", Max: 5}
	if allSecure && p.HTTPS {
		f.Points += 3
	}
	if allHTTPOnly {
		f.Points++
	}
	if allSameSite {
		f.Points++
	}
	switch f.Points {
	case 5:
		f.Result = "pass"
	case 0:
		f.Result = "fail"
	default:
		f.Result = "partial"
	}
	if len(p.Cookies) == 0 {
		f.Detail = "no cookies set"
	}
	return f, strings.Join(problems, "; ")
}

func sameSite(s http.SameSite) string {
	switch s {
	case http.SameSiteLaxMode:
		return "lax"
	case http.SameSiteStrictMode:
		return "strict"
	case http.SameSiteNoneMode:
		return "none"
	}
	return ""
}

// letter maps a score out of 100 to a grade.
func letter(score int) string {
	switch {
	case score >= 90:
		return "A"
	case score >= 75:
		return "B"
	case score >= 60:
		return "C"
	case score >= 45:
		return "D"
	case score >= 30:
		return "E"
	}
	return "F"
}

func maxAge(hsts string) (int, bool) {
	for _, part := range strings.Split(hsts, ";") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		if strings.EqualFold(strings.TrimSpace(k), "max-age") {
			n, err := strconv.Atoi(strings.Trim(strings.TrimSpace(v), `"`))
			return n, err == nil
		}
	}
	return 0, false
}

// parseCSP maps directive names to their values; the first occurrence wins,
// as browsers do.
func parseCSP(csp string) map[string]string {
	out := map[string]string{}
	for _, d := range strings.Split(csp, ";") {
		name, value, _ := strings.Cut(strings.TrimSpace(d), " ")
		name = strings.ToLower(name)
		if _, seen := out[name]; name != "" && !seen {
			out[name] = strings.TrimSpace(value)
		}
	}
	return out
}

// unsafeScripts reports whether the policy lets inline or eval'd scripts
// run: 'unsafe-inline' without a nonce or hash (which disable it), or
// 'unsafe-eval'.
func unsafeScripts(d map[string]string) bool {
	v, ok := d["script-src"]
	if !ok {
		v, ok = d["default-src"]
	}
	if !ok {
		return true // no script policy at all
	}
	v = strings.ToLower(v)
	if strings.Contains(v, "'unsafe-eval'") {
		return true
	}
	return strings.Contains(v, "'unsafe-inline'") && !strings.Contains(v, "'nonce-") && !strings.Contains(v, "'sha")
}

// lastPolicy returns the last token of a Referrer-Policy list, which is the
// one browsers apply.
func lastPolicy(rp string) string {
	parts := strings.Split(rp, ",")
	return strings.ToLower(strings.TrimSpace(parts[len(parts)-1]))
}
