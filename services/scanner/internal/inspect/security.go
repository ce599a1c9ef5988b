package inspect

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/surveyor/surveyor/pkg/job"
)

// The rubric is documented in the README (Security grade); keep the
// two in step.

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
func Grade(p Page) *job.Security {
	s := &job.Security{Findings: []job.Finding{}, Cookies: []job.CookieFlags{}, Issues: []string{}}
	add := func(f job.Finding, issue string) {
		s.Findings = append(s.Findings, f)
		s.Score += f.Points
		if f.Result != job.Pass && issue != "" {
			s.Issues = append(s.Issues, issue)
		}
	}
	h := p.Header

	if p.HTTPS {
		add(job.Finding{Check: "https", Result: job.Pass, Points: 20, Max: 20}, "")
	} else {
		add(job.Finding{Check: "https", Result: job.Fail, Max: 20}, "the page is served over plain http")
	}

	switch {
	case p.HTTPSRedirect == nil:
		add(job.Finding{Check: "https_redirect", Result: job.Fail, Max: 10, Detail: "could not be checked"}, "the plain-http address could not be checked for a redirect to https")
	case *p.HTTPSRedirect:
		add(job.Finding{Check: "https_redirect", Result: job.Pass, Points: 10, Max: 10}, "")
	default:
		add(job.Finding{Check: "https_redirect", Result: job.Fail, Max: 10}, "plain http does not redirect to https")
	}

	hsts := h.Get("Strict-Transport-Security")
	switch age, ok := maxAge(hsts); {
	case !p.HTTPS || hsts == "":
		add(job.Finding{Check: "hsts", Result: job.Fail, Max: 15, Value: hsts}, "no Strict-Transport-Security header on an https response")
	case !ok || age <= 0:
		add(job.Finding{Check: "hsts", Result: job.Fail, Max: 15, Value: hsts, Detail: "no usable max-age"}, "Strict-Transport-Security has no usable max-age")
	case age < hstsMinAge:
		add(job.Finding{Check: "hsts", Result: job.Partial, Points: 8, Max: 15, Value: hsts, Detail: "max-age under 180 days"}, "Strict-Transport-Security max-age is under 180 days")
	default:
		add(job.Finding{Check: "hsts", Result: job.Pass, Points: 15, Max: 15, Value: hsts}, "")
	}

	csp := h.Get("Content-Security-Policy")
	directives := parseCSP(csp)
	switch {
	case csp == "" && h.Get("Content-Security-Policy-Report-Only") != "":
		add(job.Finding{Check: "csp", Result: job.Partial, Points: 3, Max: 15, Value: h.Get("Content-Security-Policy-Report-Only"), Detail: "report-only"}, "Content-Security-Policy is only reported, not enforced")
	case csp == "":
		add(job.Finding{Check: "csp", Result: job.Fail, Max: 15}, "no Content-Security-Policy header")
	case unsafeScripts(directives):
		add(job.Finding{Check: "csp", Result: job.Partial, Points: 8, Max: 15, Value: csp, Detail: "allows unsafe-inline or unsafe-eval scripts"}, "Content-Security-Policy allows unsafe-inline or unsafe-eval scripts")
	default:
		add(job.Finding{Check: "csp", Result: job.Pass, Points: 15, Max: 15, Value: csp}, "")
	}

	xfo := strings.ToUpper(strings.TrimSpace(h.Get("X-Frame-Options")))
	_, ancestors := directives["frame-ancestors"]
	switch {
	case ancestors:
		add(job.Finding{Check: "frame_options", Result: job.Pass, Points: 10, Max: 10, Value: "frame-ancestors " + directives["frame-ancestors"]}, "")
	case xfo == "DENY" || xfo == "SAMEORIGIN":
		add(job.Finding{Check: "frame_options", Result: job.Pass, Points: 10, Max: 10, Value: xfo}, "")
	default:
		add(job.Finding{Check: "frame_options", Result: job.Fail, Max: 10, Value: xfo}, "no X-Frame-Options DENY/SAMEORIGIN or CSP frame-ancestors: the page can be framed")
	}

	if xcto := h.Get("X-Content-Type-Options"); strings.EqualFold(strings.TrimSpace(xcto), "nosniff") {
		add(job.Finding{Check: "content_type_options", Result: job.Pass, Points: 10, Max: 10, Value: xcto}, "")
	} else {
		add(job.Finding{Check: "content_type_options", Result: job.Fail, Max: 10, Value: xcto}, "no X-Content-Type-Options: nosniff")
	}

	rp := h.Get("Referrer-Policy")
	switch policy := lastPolicy(rp); policy {
	case "no-referrer", "same-origin", "strict-origin", "strict-origin-when-cross-origin", "origin", "origin-when-cross-origin":
		add(job.Finding{Check: "referrer_policy", Result: job.Pass, Points: 5, Max: 5, Value: rp}, "")
	case "":
		add(job.Finding{Check: "referrer_policy", Result: job.Fail, Max: 5, Value: rp}, "no Referrer-Policy header")
	default:
		add(job.Finding{Check: "referrer_policy", Result: job.Fail, Max: 5, Value: rp}, "Referrer-Policy "+policy+" leaks full URLs")
	}

	switch pp, fp := h.Get("Permissions-Policy"), h.Get("Feature-Policy"); {
	case pp != "":
		add(job.Finding{Check: "permissions_policy", Result: job.Pass, Points: 5, Max: 5, Value: pp}, "")
	case fp != "":
		add(job.Finding{Check: "permissions_policy", Result: job.Partial, Points: 2, Max: 5, Value: fp, Detail: "legacy Feature-Policy"}, "only the legacy Feature-Policy header, no Permissions-Policy")
	default:
		add(job.Finding{Check: "permissions_policy", Result: job.Fail, Max: 5}, "no Permissions-Policy header")
	}

	add(gradeCookies(s, p))

	m := p.Markup
	switch {
	case !p.HTTPS:
		add(job.Finding{Check: "mixed_content", Result: job.Fail, Max: 5, Detail: "the page itself is not https"}, "")
	case len(m.Active) > 0:
		add(job.Finding{Check: "mixed_content", Result: job.Fail, Max: 5, Value: m.Active[0]}, fmt.Sprintf("%d script/style/frame resources load over http (first: %s)", len(m.Active), m.Active[0]))
	case len(m.Passive) > 0 || len(m.Forms) > 0:
		first := append(append([]string{}, m.Passive...), m.Forms...)[0]
		add(job.Finding{Check: "mixed_content", Result: job.Partial, Points: 2, Max: 5, Value: first}, fmt.Sprintf("%d images, media or forms use http (first: %s)", len(m.Passive)+len(m.Forms), first))
	default:
		add(job.Finding{Check: "mixed_content", Result: job.Pass, Points: 5, Max: 5}, "")
	}

	s.Grade = letter(s.Score)
	return s
}

// gradeCookies lists every cookie's flags and scores them together: 3
// points if all are Secure, 1 if all are HttpOnly, 1 if all set SameSite.
func gradeCookies(s *job.Security, p Page) (job.Finding, string) {
	allSecure, allHTTPOnly, allSameSite := true, true, true
	var problems []string
	for _, c := range p.Cookies {
		f := job.CookieFlags{Name: c.Name, Secure: c.Secure, HTTPOnly: c.HttpOnly, SameSite: sameSite(c.SameSite)}
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
	f := job.Finding{Check: "cookies", Max: 5}
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
		f.Result = job.Pass
	case 0:
		f.Result = job.Fail
	default:
		f.Result = job.Partial
	}
	if len(p.Cookies) == 0 {
		f.Detail = "no cookies set"
	}
	return f, strings.Join(problems, "; ")
}

func sameSite(s http.SameSite) job.SameSite {
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
func letter(score int) job.Grade {
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
