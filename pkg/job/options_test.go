package job

import (
	"reflect"
	"testing"
)

func TestCanonicalOptions(t *testing.T) {
	every := []string{"technologies", "headers", "tls", "dns", "security", "emails"}
	cases := []struct {
		names, want []string
	}{
		{nil, []string{"technologies"}},
		{[]string{"tls", "headers", "tls"}, []string{"headers", "tls"}},
		{[]string{"emails", "all"}, every},
		{[]string{"dns"}, []string{"dns"}},
	}
	for _, c := range cases {
		if got := CanonicalOptions(c.names); !reflect.DeepEqual(got, c.want) {
			t.Errorf("CanonicalOptions(%q) = %q, want %q", c.names, got, c.want)
		}
	}
	for _, name := range append(every, "all") {
		if !IsOption(name) {
			t.Errorf("IsOption(%q) = false", name)
		}
	}
	for _, name := range []string{"", "TLS", " tls", "screenshots"} {
		if IsOption(name) {
			t.Errorf("IsOption(%q) = true", name)
		}
	}
	j := &Job{Kind: Scan, Options: CanonicalOptions([]string{"security"})}
	if !j.Wants(OptionSecurity) || j.Wants(OptionTechnologies) {
		t.Errorf("Wants on %q", j.Options)
	}
}
