package job

import "slices"

// Option is one section a scan may add to its result (contract §3).
type Option string

const (
	OptionTechnologies Option = "technologies"
	OptionHeaders      Option = "headers"
	OptionTLS          Option = "tls"
	OptionDNS          Option = "dns"
	OptionSecurity     Option = "security"
	OptionEmails       Option = "emails"
)

// ScanOptions lists every option in canonical order.
var ScanOptions = []Option{OptionTechnologies, OptionHeaders, OptionTLS, OptionDNS, OptionSecurity, OptionEmails}

// Enum lists the options in canonical order.
func (Option) Enum() []string { return enum(ScanOptions) }

// AllOptions, in a request, stands for every option.
const AllOptions = "all"

// DefaultOption is what a scan request that names no option gets.
const DefaultOption = OptionTechnologies

// IsOption reports whether a request may name name: an option or "all",
// spelled exactly so.
func IsOption(name string) bool {
	return name == AllOptions || slices.Contains(ScanOptions, Option(name))
}

// CanonicalOptions is the option list a scan job carries for the names a
// request gave (each one IsOption): every option asked for once, in
// ScanOptions order, "all" expanded, DefaultOption when none is named.
func CanonicalOptions(names []string) []string {
	out := make([]string, 0, len(ScanOptions))
	for _, o := range ScanOptions {
		if slices.Contains(names, string(o)) || slices.Contains(names, AllOptions) {
			out = append(out, string(o))
		}
	}
	if len(out) == 0 {
		out = append(out, string(DefaultOption))
	}
	return out
}

// Wants reports whether a scan job asked for option o. The job's list is
// canonical (CanonicalOptions made it), so a worker reads it as it is.
func (j *Job) Wants(o Option) bool { return slices.Contains(j.Options, string(o)) }
