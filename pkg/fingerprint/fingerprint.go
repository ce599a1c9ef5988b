// Package fingerprint names the technologies a web page runs, from the
// evidence of one fetch (headers, cookies, HTML, DNS, certificate), using
// definitions in the Wappalyzer technology format.
//
// The Engine is built for volume: every regex's required literals are found
// with one multi-pattern scan per piece of evidence, and a regex runs only
// where its literals occur. The result is the same as running every regex on
// every field (the tests compare both), at a fraction of the cost.
package fingerprint

// Evidence is what one fetch of a site revealed. Map keys are lower-case
// except DNS record types, which are upper-case ("TXT", "MX", ...).
type Evidence struct {
	URL        string
	Status     int
	Headers    map[string][]string // lower-case names
	Cookies    map[string]string
	HTML       string              // raw body (bounded by caller)
	Meta       map[string][]string // lower-case meta name/property -> contents
	Title      string
	ScriptSrc  []string
	Scripts    []string // inline script bodies
	CSS        []string // inline <style> bodies
	Links      []string // <link href> and <a href> values
	Text       string   // visible text
	Robots     string
	DNS        map[string][]string // "TXT","MX","NS","CNAME","SOA"
	CertIssuer string
}

// Detection is one technology found on a page.
type Detection struct {
	Name       string   `json:"name"`
	Slug       string   `json:"slug"`
	Version    string   `json:"version,omitempty"`
	Categories []string `json:"categories"`
	Confidence int      `json:"confidence"`
	Website    string   `json:"website"`
}

// Technology is one definition of the database. Its patterns are private:
// callers list and show technologies, the Engine matches them.
type Technology struct {
	Name        string   `json:"name"`
	Slug        string   `json:"slug"`
	Categories  []string `json:"categories"` // names, bound by the DB holding it
	Website     string   `json:"website,omitempty"`
	Description string   `json:"description,omitempty"`
	Icon        string   `json:"icon,omitempty"`
	CPE         string   `json:"cpe,omitempty"`

	categoryIDs      []int
	patterns         []*pattern
	implies          []reference
	excludes         []string
	requires         []string
	requiresCategory []int
	notEvaluated     int       // js, dom and xhr patterns: they need a browser
	problems         []Problem // patterns dropped at parse time
}

// reference is an implied technology with the confidence (and optional
// fixed version) the implication carries.
type reference struct {
	name       string
	confidence int
	version    string
}

// Problem is a definition the loader could not use as written. The rest of
// the technology still loads.
type Problem struct {
	Technology string `json:"technology"`
	Field      string `json:"field"`
	Pattern    string `json:"pattern,omitempty"`
	Reason     string `json:"reason"`
}

func (p Problem) Error() string {
	if p.Pattern == "" {
		return p.Technology + ": " + p.Field + ": " + p.Reason
	}
	return p.Technology + ": " + p.Field + " " + quote(p.Pattern) + ": " + p.Reason
}

// LoadReport counts what a database holds and lists what it could not use.
type LoadReport struct {
	Technologies int       `json:"technologies"`
	Categories   int       `json:"categories"`
	Patterns     int       `json:"patterns"`      // regex patterns the engine evaluates
	NotEvaluated int       `json:"not_evaluated"` // js, dom and xhr patterns, counted but not run
	Problems     []Problem `json:"problems,omitempty"`
}
