package fingerprint

import (
	"slices"
	"strings"
	"testing"
)

func TestParseHTML(t *testing.T) {
	page := `<!DOCTYPE html><html><head>
<meta charset="utf-8"><meta name="Generator" content="WordPress 6.4.2">
<meta property="og:site_name" content="Demo &amp; Co"><meta http-equiv="X-UA-Compatible" content="IE=edge">
<title>  Demo
 shop </title>
<link rel="stylesheet" href="/wp-content/themes/x/style.css?ver=6.4.2">
<script src="https://cdn.example/jquery-3.7.1.min.js"></script>
<script type="text/javascript">var wc = {"ajax_url":"/wp-admin/admin-ajax.php"}; if (a < b) {}</script>
<style>.hero{color:red}</style>
</head><body><noscript>enable JS</noscript>
<h1>Hello&nbsp;world</h1><p>Shop   now</p><a href="/cart">Cart</a>
<svg><text>icon</text></svg><template><p>hidden</p></template>
</body></html>`
	var ev Evidence
	ParseHTML([]byte(page), &ev)
	if ev.HTML != page {
		t.Error("HTML must be the raw body")
	}
	if got := ev.Meta["generator"]; !slices.Equal(got, []string{"WordPress 6.4.2"}) {
		t.Errorf("meta generator %v", got)
	}
	if got := ev.Meta["og:site_name"]; !slices.Equal(got, []string{"Demo & Co"}) {
		t.Errorf("meta og:site_name %v", got)
	}
	if got := ev.Meta["x-ua-compatible"]; !slices.Equal(got, []string{"IE=edge"}) {
		t.Errorf("meta http-equiv %v", got)
	}
	if ev.Title != "Demo shop" {
		t.Errorf("title %q", ev.Title)
	}
	if !slices.Equal(ev.ScriptSrc, []string{"https://cdn.example/jquery-3.7.1.min.js"}) {
		t.Errorf("scriptSrc %v", ev.ScriptSrc)
	}
	if len(ev.Scripts) != 1 || !strings.Contains(ev.Scripts[0], "admin-ajax.php") || !strings.Contains(ev.Scripts[0], "a < b") {
		t.Errorf("scripts %q", ev.Scripts)
	}
	if !slices.Equal(ev.CSS, []string{".hero{color:red}"}) {
		t.Errorf("css %q", ev.CSS)
	}
	if !slices.Equal(ev.Links, []string{"/wp-content/themes/x/style.css?ver=6.4.2", "/cart"}) {
		t.Errorf("links %v", ev.Links)
	}
	if ev.Text != "Hello world Shop now Cart" {
		t.Errorf("text %q", ev.Text)
	}
}

func TestParseHTMLBounds(t *testing.T) {
	var b strings.Builder
	for i := 0; i < maxScriptSrc+50; i++ {
		b.WriteString(`<script src="/s.js"></script><meta name="m" content="c">`)
	}
	b.WriteString("<p>" + strings.Repeat("word ", maxTextBytes/4) + "</p>")
	var ev Evidence
	ParseHTML([]byte(b.String()), &ev)
	if len(ev.ScriptSrc) != maxScriptSrc || len(ev.Meta["m"]) != maxMeta {
		t.Errorf("scriptSrc %d, meta %d: want the caps %d, %d", len(ev.ScriptSrc), len(ev.Meta["m"]), maxScriptSrc, maxMeta)
	}
	if len(ev.Text) > maxTextBytes || len(ev.Text) < maxTextBytes/2 {
		t.Errorf("text %d bytes, cap %d", len(ev.Text), maxTextBytes)
	}
	big := make([]byte, MaxHTMLBytes+10)
	for i := range big {
		big[i] = 'a'
	}
	ev = Evidence{}
	ParseHTML(big, &ev)
	if len(ev.HTML) != MaxHTMLBytes {
		t.Errorf("HTML %d bytes, want the cap %d", len(ev.HTML), MaxHTMLBytes)
	}
}
