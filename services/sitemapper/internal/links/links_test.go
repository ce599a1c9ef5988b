package links

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

const page = `<!doctype html>
<html><head>
<title>  Hello
  &amp; welcome </title>
<base href="/base/">
<link rel="canonical" href="/canon">
<link rel="alternate" hreflang="de" href="/de/">
<link rel="next" href="page2">
<link rel="prev nofollow" href="page0">
<link rel="stylesheet" href="/style.css">
<meta http-equiv="Refresh" content="5; URL='/refreshed'">
</head><body>
<svg><title>icon</title></svg>
<a href="one">1</a>
<a href=" two ">2</a>
<a rel="NoFollow" href="/secret">x</a>
<a href="mailto:a@b.test">mail</a>
<a href="">empty</a>
<a>no href</a>
<map><area href="/area" alt=""></map>
<iframe src="/frame"></iframe>
<img src="/img.png">
<script>var s = '<a href="/in-script">';</script>
</body></html>`

func TestParse(t *testing.T) {
	p, err := Parse(strings.NewReader(page), "surveyorbot", 100)
	if err != nil {
		t.Fatal(err)
	}
	if p.Title != "Hello & welcome" {
		t.Errorf("title = %q", p.Title)
	}
	if p.Base != "/base/" || p.Canonical != "/canon" || p.Refresh != "/refreshed" {
		t.Errorf("base %q canonical %q refresh %q", p.Base, p.Canonical, p.Refresh)
	}
	want := []string{"/de/", "page2", "one", "two", "mailto:a@b.test", "/area", "/frame"}
	if !reflect.DeepEqual(p.Links, want) {
		t.Errorf("links = %q\nwant    %q", p.Links, want)
	}
	if p.Noindex || p.Nofollow {
		t.Errorf("noindex %v nofollow %v, want neither", p.Noindex, p.Nofollow)
	}
}

func TestParseMetaRobots(t *testing.T) {
	cases := []struct {
		head              string
		noindex, nofollow bool
		links             int
	}{
		{`<meta name="robots" content="noindex">`, true, false, 1},
		{`<meta name="ROBOTS" content="NOINDEX, NOFOLLOW">`, true, true, 0},
		{`<meta name="robots" content="none">`, true, true, 0},
		{`<meta name="surveyorbot" content="nofollow">`, false, true, 0},
		{`<meta name="otherbot" content="noindex,nofollow">`, false, false, 1},
		{`<meta name="robots" content="index, follow">`, false, false, 1},
	}
	for _, c := range cases {
		p, err := Parse(strings.NewReader("<head>"+c.head+"</head><a href=/x>x</a>"), "surveyorbot", 10)
		if err != nil {
			t.Fatal(err)
		}
		if p.Noindex != c.noindex || p.Nofollow != c.nofollow || len(p.Links) != c.links {
			t.Errorf("%s: noindex %v nofollow %v links %d", c.head, p.Noindex, p.Nofollow, len(p.Links))
		}
	}
}

func TestParseCapsLinks(t *testing.T) {
	doc := strings.Repeat(`<a href="/x">x</a>`, 50)
	p, err := Parse(strings.NewReader(doc), "", 20)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Links) != 20 {
		t.Fatalf("%d links, want the cap of 20", len(p.Links))
	}
}

type failing struct{ r io.Reader }

var errBroken = errors.New("connection reset")

func (f failing) Read(b []byte) (int, error) {
	n, err := f.r.Read(b)
	if err == io.EOF {
		return n, errBroken
	}
	return n, err
}

func TestParseKeepsWhatCameBeforeAnError(t *testing.T) {
	p, err := Parse(failing{strings.NewReader(`<title>T</title><a href="/a">a</a><a href="/b">`)}, "", 10)
	if !errors.Is(err, errBroken) {
		t.Fatalf("err = %v, want the read error", err)
	}
	if p.Title != "T" || len(p.Links) != 2 {
		t.Fatalf("title %q links %q", p.Title, p.Links)
	}
}

func TestRefreshURL(t *testing.T) {
	for in, want := range map[string]string{
		"0; url=http://x.test/a": "http://x.test/a",
		"0;URL=/b":               "/b",
		`3; url="/c d"`:          "/c d",
		"5":                      "",
		"0, /e":                  "/e",
		"1; url = '/f":           "/f",
	} {
		if got := refreshURL(in); got != want {
			t.Errorf("refreshURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestXRobotsTag(t *testing.T) {
	cases := []struct {
		values            []string
		noindex, nofollow bool
	}{
		{[]string{"noindex"}, true, false},
		{[]string{"noindex, nofollow"}, true, true},
		{[]string{"none"}, true, true},
		{[]string{"googlebot: noindex"}, false, false},
		{[]string{"SurveyorBot: noindex"}, true, false},
		{[]string{"max-snippet: 20, noindex"}, true, false},
		{[]string{"unavailable_after: 25 Jun 2030 15:00:00 PST"}, false, false},
		{[]string{"all", "nofollow"}, false, true},
		{nil, false, false},
	}
	for _, c := range cases {
		ni, nf := XRobotsTag(c.values, "surveyorbot")
		if ni != c.noindex || nf != c.nofollow {
			t.Errorf("XRobotsTag(%q) = %v, %v", c.values, ni, nf)
		}
	}
}
