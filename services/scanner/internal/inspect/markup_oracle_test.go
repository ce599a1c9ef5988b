package inspect

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/surveyor/surveyor/pkg/fingerprint"
	"golang.org/x/net/html"
)

// scanMarkup reads body as the scanner does: one pass that gathers the
// fingerprint evidence and hands the page's references to Markup.Add.
func scanMarkup(body []byte) Markup {
	var m Markup
	var ev fingerprint.Evidence
	fingerprint.ParseHTMLRefs(body, &ev, m.Add)
	return m
}

// scanMarkupOracle is how Markup was built before the single pass: a second
// reading of the page with x/net/html's Tokenizer and a map per tag. It
// stays here, and only here, as the reference scanMarkup must match.
func scanMarkupOracle(body []byte) Markup {
	var m Markup
	add := func(list *[]string, v string) {
		if len(*list) < maxListed {
			*list = append(*list, v)
		}
	}
	z := html.NewTokenizer(bytes.NewReader(body))
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			return m
		}
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		name, hasAttr := z.TagName()
		attrs := map[string]string{}
		for hasAttr {
			var k, v []byte
			k, v, hasAttr = z.TagAttr()
			if _, seen := attrs[string(k)]; !seen {
				attrs[string(k)] = strings.TrimSpace(string(v))
			}
		}
		switch tag := string(name); tag {
		case "a", "area":
			if href := attrs["href"]; hasPrefixFold(href, "mailto:") {
				add(&m.Mailto, href)
			}
		case "script", "iframe", "frame", "embed":
			if insecure(attrs["src"]) {
				add(&m.Active, attrs["src"])
			}
		case "object":
			if insecure(attrs["data"]) {
				add(&m.Active, attrs["data"])
			}
		case "link":
			rel := strings.ToLower(attrs["rel"])
			if insecure(attrs["href"]) && (strings.Contains(rel, "stylesheet") || strings.Contains(rel, "preload") || strings.Contains(rel, "modulepreload")) {
				add(&m.Active, attrs["href"])
			}
		case "img", "audio", "video", "source", "track":
			if insecure(attrs["src"]) {
				add(&m.Passive, attrs["src"])
			}
		case "form":
			if insecure(attrs["action"]) {
				add(&m.Forms, attrs["action"])
			}
		}
	}
}

// hostileMarkup holds pages where the single pass is most likely to part
// ways with the tokenizer: broken and odd markup around every reference.
var hostileMarkup = []string{
	``,
	`<img src="http://a/unclosed.png"`,
	`<img src='http://a/unclosed`,
	`<p><img src=http://a/x.png><script src=http://s/a.js></script><iframe src=http://f/</iframe>after<img src=http://b>`,
	`<img src=http://a/unquoted.png alt=x><img src=http://a/q.png/><img src=http://a/s.png />`,
	`<IMG SRC="HTTP://CAPS/x.png"><Script Src=Http://mixed/a.js></SCRIPT><a HREF="MAILTO:Boss@Example.com">`,
	`<img src="  http://padded/x.png  "><a href="
 mailto:pad@example.com ">`,
	`<img src="" src="http://second"><img src="http://first" SRC="http://second"><img src>`,
	`<!-- <img src="http://in-comment"> --><img src="http://after-comment"><!--unterminated <img src="http://x">`,
	`<![CDATA[<img src="http://in-cdata">]]><img src="http://after-cdata"><!DOCTYPE html><?xml <img src="http://pi">?>`,
	`<script>var s = "</scr" + "ipt><img src=http://in-script-string>";</script><img src=http://after-script>`,
	`<script>var s = "</script><img src=http://ends-script>";</script><img src=http://tail>`,
	`<script><!-- document.write("<script src=http://nested><\/script>") --></script><img src=http://after>`,
	`<script><!--<script></script><img src=http://escaped></script><img src=http://out>`,
	`<style>body{background:url(http://css)}</style><textarea><img src=http://ta></textarea><title><img src=http://t></title>`,
	`<noscript><img src=http://noscript></noscript><iframe><img src=http://in-iframe></iframe><noembed><embed src=http://ne></noembed>`,
	`<xmp><img src=http://xmp></xmp><plaintext><img src=http://plain>`,
	`<object data="http://o/flash.swf"><embed src="http://o/e.swf"></object><frame src=http://frame><area href="mailto:area@example.com">`,
	`<link rel=stylesheet href=http://l/a.css><link rel="ModulePreload" href="http://l/m.js"><link rel=preload href=http://l/p><link rel=icon href=http://l/i><link href=http://l/none>`,
	`<audio src=http://m/a.mp3><video src=http://m/v.mp4><source src=http://m/s><track src=http://m/t.vtt>`,
	`<form action=http://f/login><form action="https://f/ok"><form action="HTTP://f/caps"><form>`,
	`<a href="mailto:a%40b.org,c@d.example?subject=x">x</a><a href="mailto:">empty</a><a href="mailtox:no">`,
	`<img src="&#104;ttp://entity/x.png"><a href="mailto&#58;ent@example.com"><img src="http:&#47;&#47;e2">`,
	"<img src=\"http://nul\x00/x.png\"><img src=\"http://cr\r\nlf\"><img\tsrc\n=\n\"http://spaces\">",
	`<img/src=http://slash><img src=http://a/"quote'><a/href=mailto:s@example.com>`,
	`<svg><image href="http://svg/i"/><img src="http://svg/img"/></svg><math><img src=http://math></math>`,
	`<img src="http://big/` + strings.Repeat("a", 1<<20) + `.png"><a href="mailto:` + strings.Repeat("b", 1<<16) + `@example.com">`,
	`<div title="` + strings.Repeat("<img src=http://no>", 1<<12) + `"><img src=http://yes>`,
	strings.Repeat(`<img src="http://many/x.png"><script src=http://many/a.js></script><form action=http://many/f><a href=mailto:m@example.com>`, 200),
}

// casePages returns the html of the fingerprint package's test cases.
func casePages(tb testing.TB) []string {
	files, err := filepath.Glob("../../../../pkg/fingerprint/testdata/cases/*.json")
	if err != nil || len(files) == 0 {
		tb.Fatalf("case files: %v (%d)", err, len(files))
	}
	var pages []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		var cases []struct {
			Evidence struct {
				HTML string `json:"html"`
			} `json:"evidence"`
		}
		if err := json.Unmarshal(data, &cases); err != nil {
			tb.Fatalf("%s: %v", f, err)
		}
		for _, c := range cases {
			if c.Evidence.HTML != "" {
				pages = append(pages, c.Evidence.HTML)
			}
		}
	}
	return pages
}

// insecurePage turns a page's https and relative references into http
// ones, so that the lists the inspections keep are not empty.
var insecurePage = strings.NewReplacer("https://", "http://", `="/`, `="http://h/`, `='/`, `='http://h/`, `=/`, `=http://h/`)

func checkMarkupMatchesOracle(t testing.TB, name, page string) {
	t.Helper()
	got, want := scanMarkup([]byte(page)), scanMarkupOracle([]byte(page))
	if !reflect.DeepEqual(got, want) {
		if len(page) > 300 {
			page = page[:300] + "..."
		}
		t.Errorf("%s: %q\n got %q\nwant %q", name, page, got, want)
	}
}

// TestMarkupMatchesOracle: on the fingerprint cases and on hostile pages,
// whole, cut at every byte, and with every reference made insecure, the
// single pass reports what the tokenizer's second reading did.
func TestMarkupMatchesOracle(t *testing.T) {
	pages := casePages(t)
	var listed int
	for _, p := range pages {
		checkMarkupMatchesOracle(t, "case", p)
		insecure := insecurePage.Replace(p)
		checkMarkupMatchesOracle(t, "insecure case", insecure)
		m := scanMarkupOracle([]byte(insecure))
		listed += len(m.Active) + len(m.Passive) + len(m.Forms) + len(m.Mailto)
	}
	if listed < len(pages)/2 {
		t.Errorf("the insecure cases list only %d references in %d pages: the corpus tests little", listed, len(pages))
	}
	for _, p := range hostileMarkup {
		checkMarkupMatchesOracle(t, "hostile", p)
		if len(p) < 4<<10 {
			for n := range len(p) {
				checkMarkupMatchesOracle(t, "hostile cut", p[:n])
			}
		}
		checkMarkupMatchesOracle(t, "in script", "<script>"+p)
		checkMarkupMatchesOracle(t, "in comment script", "<script><!--"+p)
	}
}

func FuzzMarkupMatchesOracle(f *testing.F) {
	for _, p := range hostileMarkup {
		f.Add(p)
	}
	for _, p := range casePages(f) {
		f.Add(insecurePage.Replace(p))
	}
	f.Fuzz(func(t *testing.T, page string) {
		checkMarkupMatchesOracle(t, "fuzz", page)
	})
}

// BenchmarkMarkup times the scanner's reading of the case pages (made
// insecure) for evidence and markup in one pass, against the two readings
// it replaced (the evidence, then the tokenizer), which alternate with it
// so that both see the same load on a shared machine.
func BenchmarkMarkup(b *testing.B) {
	var bodies [][]byte
	var size int64
	for _, p := range casePages(b) {
		p = insecurePage.Replace(p)
		checkMarkupMatchesOracle(b, "case", p)
		bodies = append(bodies, []byte(p))
		size += int64(len(p))
	}
	var baseline time.Duration
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		start := time.Now()
		for _, body := range bodies {
			var ev fingerprint.Evidence
			fingerprint.ParseHTML(body, &ev)
			scanMarkupOracle(body)
		}
		baseline += time.Since(start)
		b.StartTimer()
		for _, body := range bodies {
			scanMarkup(body)
		}
	}
	b.ReportMetric(float64(baseline)/float64(b.Elapsed()), "speedup")
}
