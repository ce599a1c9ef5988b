package validate

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/surveyor/surveyor/pkg/netguard"
)

func TestDecodeOptions(t *testing.T) {
	every := []string{"technologies", "headers", "tls", "dns", "security", "emails"}
	cases := []struct {
		body string
		want []string
		err  string
	}{
		{`{"url":"a.com"}`, []string{"technologies"}, ""},
		{`{"url":"a.com","options":null}`, []string{"technologies"}, ""},
		{`{"url":"a.com","options":[]}`, []string{"technologies"}, ""},
		{`{"url":"a.com","options":["tls","tls","headers"]}`, []string{"headers", "tls"}, ""},
		{`{"url":"a.com","options":["all"]}`, every, ""},
		{`{"url":"a.com","options":["dns","all"]}`, every, ""},
		{`{"url":"a.com","options":["TLS"]}`, nil, "options[0]"},
		{`{"url":"a.com","options":[" tls"]}`, nil, "options[0]"},
		{`{"url":"a.com","options":["screenshots"]}`, nil, "options[0]"},
		{`{"url":"a.com","options":[1]}`, nil, "options[0]"},
		{`{"url":"a.com","options":"tls"}`, nil, "options"},
	}
	for _, c := range cases {
		reqs, errs := Decode(ScanOne, []byte(c.body), netguard.PublicOnly)
		if c.err != "" {
			if len(errs) != 1 || errs[0].Field != c.err {
				t.Errorf("%s: errors %v, want one on %s", c.body, errs, c.err)
			}
			continue
		}
		if len(errs) > 0 || !reflect.DeepEqual(reqs[0].Options, c.want) {
			t.Errorf("%s: options %v errors %v, want %v", c.body, reqs, errs, c.want)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	many := func(n int, item string) string {
		items := make([]string, n)
		for i := range items {
			items[i] = fmt.Sprintf(item, i)
		}
		return strings.Join(items, ",")
	}
	cases := []struct {
		e      Endpoint
		body   string
		fields []string // every bad field, in order
	}{
		{ScanOne, `{"url":`, []string{""}},
		{ScanOne, `[1,2]`, []string{""}},
		{ScanOne, `"x"`, []string{""}},
		{ScanOne, `null`, []string{""}},
		{ScanOne, `{}`, []string{"url"}},
		{ScanOne, `{"url":null}`, []string{"url"}},
		{ScanOne, `{"url":42}`, []string{"url"}},
		{ScanOne, `{"url":"a.com","force":"yes"}`, []string{"force"}},
		{ScanOne, `{"url":"a.com","extra":1,"another":2}`, []string{"another", "extra"}},
		{ScanMany, `{"urls":[]}`, []string{"urls"}},
		{ScanMany, `{"urls":[` + many(1001, `"h%d.com"`) + `]}`, []string{"urls"}},
		{ScanMany, `{"urls":["ok.com","ftp://x",3,"10.0.0.1"]}`, []string{"urls[1]", "urls[2]", "urls[3]"}},
		{ScanMany, `{"urls":["ok.com","ftp://x","10.0.0.1"]}`, []string{"urls[1]", "urls[2]"}},
		{ScanMany, `{"urls":"a.com"}`, []string{"urls"}},
		{SitemapOne, `{"url":"a.com","max_pages":0}`, []string{"max_pages"}},
		{SitemapOne, `{"url":"a.com","max_pages":10001}`, []string{"max_pages"}},
		{SitemapOne, `{"url":"a.com","max_pages":2.5}`, []string{"max_pages"}},
		{SitemapOne, `{"url":"a.com","max_pages":"9"}`, []string{"max_pages"}},
		{SitemapOne, `{"url":"a.com","options":["tls"]}`, []string{"options"}},
		{EmailOne, `{"email":""}`, []string{"email"}},
		{EmailOne, `{"email":"` + strings.Repeat("a", 321) + `"}`, []string{"email"}},
		{EmailMany, `{"emails":["a@b.c",""," ",null]}`, []string{"emails[1]", "emails[3]"}},
		{SitemapOne, `{"url":"a.com","max_pages":1e5}`, []string{"max_pages"}},
		{SitemapOne, `{"url":"a.com","max_pages":1e400}`, []string{"max_pages"}},
		{SitemapOne, `{"url":"a.com","max_pages":-0.0}`, []string{"max_pages"}},
		{SitemapOne, `{"url":"a.com","max_pages":true}`, []string{"max_pages"}},
		{EmailMany, `{"emails":[` + many(1001, `"u%d@x.com"`) + `]}`, []string{"emails"}},
	}
	for _, c := range cases {
		_, errs := Decode(c.e, []byte(c.body), netguard.PublicOnly)
		var got []string
		for _, e := range errs {
			got = append(got, e.Field)
			if e.Message == "" {
				t.Errorf("%s: empty message for %s", c.body, e.Field)
			}
		}
		if !reflect.DeepEqual(got, c.fields) {
			t.Errorf("%.80s: bad fields %v, want %v", c.body, got, c.fields)
		}
	}
}

func TestDecodeAccepts(t *testing.T) {
	reqs, errs := Decode(SitemapOne, []byte(`{"url":"A.com","force":null}`), netguard.PublicOnly)
	if len(errs) > 0 || reqs[0].MaxPages != 100 || reqs[0].Force || reqs[0].URL != "https://a.com/" {
		t.Fatalf("%+v %v", reqs, errs)
	}
	for body, want := range map[string]int{`{"url":"a.com","max_pages":2.0}`: 2, `{"url":"a.com","max_pages":1e2}`: 100, `{"url":"a.com","max_pages":10000}`: 10000} {
		reqs, errs = Decode(SitemapOne, []byte(body), netguard.PublicOnly)
		if len(errs) > 0 || reqs[0].MaxPages != want {
			t.Errorf("%s: %+v %v, want max_pages %d", body, reqs, errs, want)
		}
	}
	reqs, errs = Decode(EmailMany, []byte(`{"emails":["Bob@Example.COM","not an address"],"force":true}`), netguard.PublicOnly)
	if len(errs) > 0 || reqs[0].Email != "Bob@example.com" || reqs[1].Email != "not an address" || !reqs[1].Force {
		t.Fatalf("%+v %v", reqs, errs)
	}
	reqs, _ = Decode(ScanMany, []byte(`{"urls":["a.com","https://a.com/#x"]}`), netguard.PublicOnly)
	if reqs[0].Key() != reqs[1].Key() {
		t.Fatalf("equal targets have different keys: %q %q", reqs[0].Key(), reqs[1].Key())
	}
}
