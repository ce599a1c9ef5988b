package scan

import (
	"fmt"
	"strings"
)

// Options are the sections a job asked for (contract §3).
type Options struct {
	Technologies, Headers, TLS, DNS, Security, Emails bool
}

// ParseOptions reads a job's option list; none means technologies only.
func ParseOptions(list []string) (Options, error) {
	var o Options
	if len(list) == 0 {
		o.Technologies = true
	}
	for _, name := range list {
		switch strings.ToLower(strings.TrimSpace(name)) {
		case "technologies":
			o.Technologies = true
		case "headers":
			o.Headers = true
		case "tls":
			o.TLS = true
		case "dns":
			o.DNS = true
		case "security":
			o.Security = true
		case "emails":
			o.Emails = true
		case "all":
			o = Options{true, true, true, true, true, true}
		default:
			return o, fmt.Errorf("unknown option %q", name)
		}
	}
	return o, nil
}
