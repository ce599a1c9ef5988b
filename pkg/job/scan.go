package job

import "time"

// ScanResult is the result document of a scan (contract §4). Option
// sections are present only when asked for.
type ScanResult struct {
	FinalURL       string              `json:"final_url"`
	HTTPStatus     int                 `json:"http_status"`
	Title          string              `json:"title"`
	IP             string              `json:"ip"`
	Redirects      []string            `json:"redirects"`
	ResponseTimeMS int64               `json:"response_time_ms"`
	Technologies   []Technology        `json:"technologies,omitzero"`
	Headers        map[string][]string `json:"headers,omitzero"` // final response, lower-case names
	TLS            *TLSInfo            `json:"tls,omitzero"`
	DNS            *DNSInfo            `json:"dns,omitzero"`
	Security       *Security           `json:"security,omitzero"`
	Emails         []string            `json:"emails,omitzero"`
}

// Technology is one technology found on a page. It has the fields of
// fingerprint.Detection, which converts to it.
type Technology struct {
	Name       string   `json:"name"`
	Slug       string   `json:"slug"`
	Version    string   `json:"version,omitempty"`
	Categories []string `json:"categories"`
	Confidence int      `json:"confidence" schema:"minimum=0,maximum=100"`
	Website    string   `json:"website"`
}

// TLSInfo is the "tls" section: the final connection and its certificate.
type TLSInfo struct {
	Protocol    string    `json:"protocol"`
	Cipher      string    `json:"cipher"`
	Subject     string    `json:"subject"`
	Issuer      string    `json:"issuer"`
	NotBefore   time.Time `json:"not_before"`
	NotAfter    time.Time `json:"not_after"`
	DNSNames    []string  `json:"dns_names"`
	SelfSigned  bool      `json:"self_signed"`
	Verified    bool      `json:"verified"`
	VerifyError string    `json:"verify_error"`
}

// MX is one mail exchanger, in a scan's "dns" section and in an email
// validation's.
type MX struct {
	Host       string `json:"host"`
	Preference uint16 `json:"preference"`
}

// DNSInfo is the "dns" section. Errors lists lookups that failed for a
// reason other than "no such name" or "no such record".
type DNSInfo struct {
	A      []string `json:"a"`
	AAAA   []string `json:"aaaa"`
	CNAME  []string `json:"cname"`
	MX     []MX     `json:"mx"`
	NS     []string `json:"ns"`
	TXT    []string `json:"txt"`
	Errors []string `json:"errors,omitempty"`
}

// Security is the "security" section: the grade and how it was reached
// (the rubric is in the README).
type Security struct {
	Grade    Grade         `json:"grade"`
	Score    int           `json:"score" schema:"minimum=0,maximum=100"`
	Findings []Finding     `json:"findings"`
	Cookies  []CookieFlags `json:"cookies"`
	Issues   []string      `json:"issues"`
}

// Grade is a security grade, A (best) to F.
type Grade string

// Enum lists the grades.
func (Grade) Enum() []string { return []string{"A", "B", "C", "D", "E", "F"} }

// Finding is one line of the rubric applied to the page.
type Finding struct {
	Check  string  `json:"check"`
	Result Outcome `json:"result"`
	Points int     `json:"points"`
	Max    int     `json:"max"`
	Value  string  `json:"value,omitempty"` // the header or setting seen
	Detail string  `json:"detail,omitempty"`
}

// Outcome is how a page did on one check.
type Outcome string

const (
	Pass    Outcome = "pass"
	Partial Outcome = "partial"
	Fail    Outcome = "fail"
)

// Enum lists the outcomes.
func (Outcome) Enum() []string { return enum([]Outcome{Pass, Partial, Fail}) }

// CookieFlags is the security view of one Set-Cookie.
type CookieFlags struct {
	Name     string   `json:"name"`
	Secure   bool     `json:"secure"`
	HTTPOnly bool     `json:"http_only"`
	SameSite SameSite `json:"same_site"`
}

// SameSite is a cookie's SameSite attribute; "" when it sets none.
type SameSite string

// Enum lists the SameSite values.
func (SameSite) Enum() []string { return []string{"lax", "strict", "none", ""} }
