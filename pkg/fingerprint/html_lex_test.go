package fingerprint

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"
)

// nastyHTML holds inputs where a hand-written lexer is most likely to part
// ways with the tokenizer.
var nastyHTML = []string{
	``,
	`<`,
	`a<`,
	`</`,
	`x</`,
	`<!`,
	`<!-`,
	`<!>`,
	`<!->x`,
	`<?`,
	`<?xml version="1.0"?><p>x</p>`,
	`</>text`,
	`</ x>after`,
	`</3>after`,
	`<3 is text`,
	`a << b <<c>`,
	`<p>unclosed`,
	`<p class="x`,
	`<div title="a>b" data-x='c>d'>in</div>`,
	`<div title=a>b>in</div>`,
	`<div =x>y</div>`,
	`<div a = "x>y" b= 'z' c =w>t</div>`,
	`<div a"b>q</div>`,
	`<DIV><META NAME="Generator" CONTENT="Big &amp; Co"><SCRIPT SRC="/A.js"></SCRIPT></DIV>`,
	`<meta name=generator content=WordPress&nbsp;6>`,
	`<meta property="og:x" content="1"><meta http-equiv="refresh" content="0;url=/x">`,
	`<meta name="" property="p" content="c"><meta content="c"><meta name="n">`,
	`<meta name="a" name="b" content="c" content="d">`,
	`<meta Name="A" NAME="B" content="c">`,
	`<a href="?a=1&copy=2&amp;b=3&lt&gt;&notit;&notin;&semi;&fjlig;&#65;&#x42;&#0;&ampx;&amp">x</a>`,
	`<a href='&copy;&copyright&copy=&nbsp&nbspx&AMP;&Amp;'>x</a>`,
	`<a href=/x/>slash</a><a href="/y"/>q<a x=1 x=2/>r<a x=1 X=2/>s<br/>t`,
	`<link href="a
b" rel=x><link href="c` + "\r\n" + `d` + "\r" + `e">`,
	"<a href=\"x\x00y\">n\x00ul</a><title>t\x00i</title><script>s\x00</script>",
	"<p>one\r\ntwo\rthree\n</p>",
	"<p>a&amp;b\r\nc</p>",
	`<p>Hello&nbsp;world &copy 2024 &notit; &#8212; &#x1F600; &bogus;</p>`,
	`<title>  A &amp; B  &lt;x&gt; </title><title>second</title>`,
	`<title>a</TITLE >b`,
	`<title>unterminated &amp; title`,
	`<title/>visible</title>`,
	`<TITLE>x</titlex></title>after`,
	`<textarea>hidden &amp; <b>x</b></textarea>shown`,
	`<script>var a = "</scr" + "ipt>"; if (a<b) {}</script>after`,
	`<script><!-- document.write("<script>x</script>"); --></script>after`,
	`<script><!-- x </script> y -->z</script>after`,
	`<script><!--<script>a</script>b--></script>after`,
	`<script><!--<script></script></script>after`,
	`<script><!-<!x<!--->a</script>b`,
	`<script><!--<scriptx></script>c`,
	`<script><!--<SCRIPT >--></script>d`,
	`<script><!--<script/>--!></script>e</script>f`,
	`<script><!--<p></script>g`,
	`<script><!--<</script>h`,
	`<script><!--<script></scriptx></script>i`,
	`<script>unterminated <!-- <script>`,
	`<script>a</SCRIPT>b</script >c`,
	`<script/>self closing text</script>after`,
	`<script src="/x.js"/>after`,
	`<script type=module></script><script></script>`,
	`<style>.a>b{}</style>after<style/>x</style>y`,
	`<style>a</stylex></style>b`,
	`<noscript><noscript>nested</noscript>still</noscript>shown`,
	`<noscript><p>raw</p></noscript>after`,
	`<iframe><b>in iframe</b></iframe>after`,
	`<noembed>a&amp;b</noembed><noframes>c</noframes><xmp><x>y</xmp>`,
	"<xmp>a\x00b\r\nc</xmp>",
	`<plaintext>everything <b>after</b> &amp;`,
	`<plaintext>`,
	`<svg><text>icon</text></svg>visible<svg/>also`,
	`<template><p>hidden</p></template>shown`,
	`<!DOCTYPE html><!doctype html><!DOCTYPE`,
	`<!-- c -->a<!---->b<!--->c<!-->d<!-- --!>e<!-- --!->f-->g<!-- -- -->h`,
	`<!-- unterminated comment`,
	`<!-- ends in dash -`,
	`<!-- ends --!`,
	`<!--x--!`,
	`a<!--b`,
	`<![CDATA[x]]>y`,
	`<p>tab	and` + "\f" + `feed` + "\v" + `vt` + "\u00a0" + `nbsp` + "\u2003" + `em` + "\u3000" + `ideo</p>`,
	"<p>bad utf8 \xff\xfe x</p>",
	`<a href="x"`,
	`<a href='x`,
	`<a href=x`,
	`<a href`,
	`<a href=`,
	`<a href= `,
	`</a`,
	`</a x="`,
	`<br/ >x<br / >y<br/a>z`,
	`<a/b=c>d</a>`,
	`<a href="1" / href="2">x</a>`,
	`<li><a href=/a>A</a></li><li><a href=/b>B</a></li>`,
	// References the scanner's inspections read.
	`<img src=http://a/x.png><IMG SRC="HTTP://b/y.png"/><img src = 'http://c' src=http://d><img src><img src="">`,
	`<area href="mailto:a@b.example"><a href=" mailto:x@y.example ">m</a><a href="mailto:1" HREF="mailto:2">`,
	`<object data="http://o/x.swf"></object><embed src=http://e/><frame src=http://f><iframe src="http://i"><img src=http://in-iframe></iframe>`,
	`<form action=http://f/post><form action=""><form>`,
	`<link rel="StyleSheet preload" href=http://l/s.css><link href="http://l/2" rel=icon><link rel=x rel=y href=z>`,
	`<audio src=http://a><video src="http://v" poster=http://p><source src=http://s><track src=http://t>`,
	`<script src="http://s.js"/><script>document.write('<img src="http://no">')</script><img src=http://yes>`,
	`<img src="&#104;ttp://entity&amp;x"><a href="mailto&#58;e@x.example">`,
	`<textarea><img src=http://no></textarea><title><img src=http://no2></title><xmp><img src=http://no3></xmp>`,
	`<!-- <img src=http://commented> --><img src=http://after><![CDATA[<img src=http://cdata>]]>`,
	`<noscript><img src="http://ns"></noscript><svg><image href="http://svg"/><img src="http://in-svg"></svg>`,
	`<img src=http://x/a"b'c><img/src=http://slash><img src` + "\n=\n" + `"http://nl"><img src=http://tab	x>`,
	`<form action="http://f" action="https://g"/><object data=http://d/ data=x/>`,
}

// samplePage is cut at every byte in the differential test.
const samplePage = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="generator" content="WordPress 6.4.2"><title>Shop &amp; more</title>
<link rel="stylesheet" href="/style.css?ver=1&amp;x=2">
<script src="/jquery.min.js"></script><script>var x = "<!--"; if (a < b) {}</script>
<style>p > a { color: red }</style><!-- note -->
</head><body><noscript>enable JS</noscript><h1 class='hero'>Hello&nbsp;world</h1>
<p>Tom &amp; Jerry<br/>line</p><a href=/cart?id=1&copy=2>Cart</a><textarea>t</textarea>
<svg><text>icon</text></svg></body></html>`

// caseHTMLs returns the html of every built-in case.
func caseHTMLs(tb testing.TB) []string {
	files, err := filepath.Glob("testdata/cases/*.json")
	if err != nil || len(files) == 0 {
		tb.Fatalf("case files: %v (%d)", err, len(files))
	}
	var out []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		var cases []builtinCase
		if err := json.Unmarshal(data, &cases); err != nil {
			tb.Fatalf("%s: %v", f, err)
		}
		for _, c := range cases {
			if c.Evidence.HTML != "" {
				out = append(out, c.Evidence.HTML)
			}
		}
	}
	return out
}

// checkMatchesOracle fails if ParseHTML and the tokenizer-based oracle
// give different evidence for page, or ParseHTMLRefs different evidence
// or Refs.
func checkMatchesOracle(t testing.TB, name, page string) {
	t.Helper()
	var got, want, withRefs Evidence
	ParseHTML([]byte(page), &got)
	parseHTMLOracle([]byte(page), &want)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: %q\n got %s\nwant %s", name, clipString(page, 300), dumpEvidence(got), dumpEvidence(want))
	}
	var refs []Ref
	ParseHTMLRefs([]byte(page), &withRefs, func(r Ref) { refs = append(refs, r) })
	if !reflect.DeepEqual(withRefs, want) {
		t.Errorf("%s: %q: evidence with refs\n got %s\nwant %s", name, clipString(page, 300), dumpEvidence(withRefs), dumpEvidence(want))
	}
	if wantRefs := refsOracle([]byte(page)); !reflect.DeepEqual(refs, wantRefs) {
		t.Errorf("%s: %q: refs\n got %q\nwant %q", name, clipString(page, 300), refs, wantRefs)
	}
}

func clipString(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

func dumpEvidence(ev Evidence) string {
	ev.HTML = ""
	b, _ := json.Marshal(ev)
	return clipString(string(b), 2000)
}

func TestParseHTMLMatchesOracle(t *testing.T) {
	for i, page := range nastyHTML {
		checkMatchesOracle(t, "nasty "+string(rune('A'+i%26)), page)
	}
	htmls := caseHTMLs(t)
	for _, page := range htmls {
		checkMatchesOracle(t, "case", page)
	}
	for _, p := range buildCorpus(2*len(platforms), 20, 60, 3) {
		checkMatchesOracle(t, p.platform+" corpus page", p.ev.HTML)
	}
	for n := 0; n <= len(samplePage); n++ {
		checkMatchesOracle(t, "sample page cut", samplePage[:n])
	}
	// Every nasty input cut at every byte, and glued after a script start
	// (its text is then raw) and a title (RCDATA).
	for _, page := range nastyHTML {
		for n := 0; n < len(page); n++ {
			checkMatchesOracle(t, "nasty cut", page[:n])
		}
		checkMatchesOracle(t, "in script", "<script>"+page)
		checkMatchesOracle(t, "in title", "<title>"+page)
		checkMatchesOracle(t, "in comment script", "<script><!--"+page)
	}
	if t.Failed() {
		t.Logf("%d case pages", len(htmls))
	}
}

// TestParseHTMLBoundsMatchOracle: the token cap must cut at the same token,
// and the Refs go on past it and past MaxHTMLBytes.
func TestParseHTMLBoundsMatchOracle(t *testing.T) {
	// Four tokens a repeat: the cap falls well before the tail.
	page := strings.Repeat("<b>x</b><!---->", maxTokens/3) + `<p>tail</p><img src="http://tail/x.png">`
	checkMatchesOracle(t, "many tokens", page)
	// A tag cut by the byte bound: the evidence ends before it, the Refs
	// read it whole.
	long := strings.Repeat("<p>"+strings.Repeat("x", 1<<10)+"</p>\n", MaxHTMLBytes>>10)
	long = long[:MaxHTMLBytes-10] + `<img src="http://cut/x.png"><a href=mailto:end@x.example>`
	checkMatchesOracle(t, "long page", long)
}

// TestUnescapeAttrMatchesTokenizer compares the attribute decoder with the
// tokenizer's on named references around every rule that differs from text.
func TestUnescapeAttrMatchesTokenizer(t *testing.T) {
	names := []string{"amp", "AMP", "Amp", "lt", "gt", "quot", "nbsp", "copy", "copyright", "not", "notit",
		"notin", "semi", "fjlig", "NotEqualTilde", "ThickSpace", "AElig", "aelig", "bogus", "ampx", "a", "x1", "frac12", "frac1"}
	var vals []string
	for _, n := range names {
		for _, tail := range []string{"", ";", "=", "x", ";x", "=x", " ", "&amp;", "1"} {
			vals = append(vals, "&"+n+tail, "v&"+n+tail+"w")
		}
	}
	vals = append(vals, "&", "&&", "&#", "&#;", "&#x", "&#65", "&#65;", "&#x41g", "&#1114112;", "&#128;", "&;", "a&b&c")
	for _, v := range vals {
		z := html.NewTokenizer(strings.NewReader(`<a href="` + v + `">`))
		z.Next()
		_, want, _ := z.TagAttr()
		if got := unescapeAttr(v); got != string(want) {
			t.Errorf("%q: got %q, want %q", v, got, want)
		}
	}
}

func FuzzParseHTMLMatchesOracle(f *testing.F) {
	for _, s := range nastyHTML {
		f.Add(s)
	}
	f.Add(samplePage)
	for _, s := range caseHTMLs(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, page string) {
		checkMatchesOracle(t, "fuzz", page)
	})
}

// BenchmarkParseHTML times ParseHTML on the benchmark corpus, after
// checking it agrees with the tokenizer-based oracle on every page, and
// reports its speed against the oracle's measured in the same run.
func BenchmarkParseHTML(b *testing.B) {
	pages := corpus()
	var size int64
	bodies := make([][]byte, len(pages))
	for i, p := range pages {
		bodies[i] = []byte(p.ev.HTML)
		size += int64(len(bodies[i]))
		checkMatchesOracle(b, p.platform, p.ev.HTML)
	}
	pass := func(parse func([]byte, *Evidence)) {
		for _, body := range bodies {
			var ev Evidence
			parse(body, &ev)
		}
	}
	const oraclePasses = 3
	start := time.Now()
	for range oraclePasses {
		pass(parseHTMLOracle)
	}
	oracleMBs := float64(size) * oraclePasses / time.Since(start).Seconds() / 1e6
	b.SetBytes(size)
	b.ResetTimer()
	for b.Loop() {
		pass(ParseHTML)
	}
	lexMBs := float64(size) * float64(b.N) / b.Elapsed().Seconds() / 1e6
	b.ReportMetric(oracleMBs, "oracle-MB/s")
	b.ReportMetric(lexMBs/oracleMBs, "speedup")
}
