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

	// dom notes the names HTML's start tags show, when ParseHTML made
	// HTML; nil makes the engine lex HTML for them itself.
	dom *domSeen
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

// Technology is one technology of the database: one definition, or several
// merged (two layers, or names that differ only in case or punctuation:
// one slug). Its patterns are private: callers list and show
// technologies, the Engine matches them.
type Technology struct {
	Name        string   `json:"name"`
	Slug        string   `json:"slug"`
	Categories  []string `json:"categories"` // names, bound by the DB holding it
	Website     string   `json:"website,omitempty"`
	Description string   `json:"description,omitempty"`
	Icon        string   `json:"icon,omitempty"`
	CPE         string   `json:"cpe,omitempty"`

	categoryIDs []int
	rules       []*rule // one per definition (per distinct requirement)
	implies     []reference
	excludes    []string
	deferred    deferredCounts
	problems    []Problem // what the loader could not use as written
}

// rule is what one definition detects with: its patterns, and the
// requirement (requires, requiresCategory) that gates them. A technology
// defined twice keeps one rule per distinct requirement, so a definition's
// requirement gates its own patterns and no other's.
type rule struct {
	patterns         []*pattern
	requires         []string
	requiresCategory []int
}

// deferredCounts counts the patterns one fetch cannot evaluate: js, xhr
// and dom properties need a browser; dom counts the checks of selectors
// the static page does not evaluate (see compileSelector).
type deferredCounts struct {
	js, xhr, dom, domProperties int
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

// LoadReport counts what a database holds and lists what it could not use
// as written (each problem names the technology; none stops the load).
type LoadReport struct {
	Technologies int `json:"technologies"`
	Categories   int `json:"categories"`
	// Patterns counts the patterns of each kind, by its field name
	// ("html", "headers", ..., "js", "dom", "xhr").
	Patterns map[string]int `json:"patterns"`
	// Evaluated counts the patterns every scan runs; Backtracking, those of
	// them that RE2 refuses (look-around), run by a backtracking engine
	// under a time limit.
	Evaluated    int `json:"evaluated"`
	Backtracking int `json:"backtracking"`
	// NotEvaluated counts the patterns no scan runs: js, xhr, dom
	// properties, and dom checks of selectors the static page does not
	// evaluate; NeedingBrowser, those only a rendered page can show (js,
	// xhr, dom properties).
	NotEvaluated   int       `json:"not_evaluated"`
	NeedingBrowser int       `json:"needing_browser"`
	Problems       []Problem `json:"problems,omitempty"`
}
