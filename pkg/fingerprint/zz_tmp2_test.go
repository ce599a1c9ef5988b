package fingerprint

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

var e2ePage = func() string {
	var sb strings.Builder
	sb.WriteString(`<!DOCTYPE html><html lang="en-US"><head><meta charset="UTF-8"><title>/shop/item-1 – Example Shop</title>
<meta name="generator" content="WordPress 6.4.3">
<meta name="generator" content="WooCommerce 8.5.2">
<link rel="stylesheet" href="/wp-content/plugins/woocommerce/assets/css/woocommerce.css?ver=8.5.2">
<link rel="stylesheet" href="/wp-content/themes/storefront/style.css?ver=4.5.3">
<script src="/wp-includes/js/jquery/jquery.min.js?ver=3.7.1"></script>
<script src="/wp-content/plugins/woocommerce/assets/js/frontend/woocommerce.min.js?ver=8.5.2"></script>
<script async src="https://www.googletagmanager.com/gtag/js?id=G-ABC123XYZ"></script>
<script>window.dataLayer = window.dataLayer || []; function gtag(){dataLayer.push(arguments);} gtag('js', new Date()); gtag('config', 'G-ABC123XYZ');</script>
</head><body class="home page-template woocommerce-js"><div id="page" class="site">
<header class="site-header"><nav class="main-navigation"><ul>`)
	for i := range 30 {
		fmt.Fprintf(&sb, `<li class="menu-item"><a href="/category/c%d/">Category %d</a></li>`, i, i)
	}
	sb.WriteString(`</ul></nav></header><main class="site-main"><ul class="products columns-4">`)
	for i := range 120 {
		fmt.Fprintf(&sb, `<li class="product type-product"><a href="/product/p%[1]d/" class="woocommerce-LoopProduct-link"><img src="/wp-content/uploads/2024/01/p%[1]d-300x300.jpg" width="300" height="300" alt="Product %[1]d" loading="lazy"><h2 class="woocommerce-loop-product__title">Product %[1]d</h2><span class="price"><bdi>%[1]d.99&nbsp;€</bdi></span></a></li>`+"\n", i)
	}
	sb.WriteString(`</ul></main><footer class="site-footer"><p>Contact: shop@example.com</p></footer></div>
<script src="/wp-content/themes/storefront/assets/js/navigation.min.js?ver=4.5.3"></script></body></html>`)
	return sb.String()
}()

func TestTmpE2EKinds(t *testing.T) {
	_, e := builtinEngine(t)
	var ev Evidence
	ParseHTML([]byte(e2ePage), &ev)
	ev.Headers = map[string][]string{"server": {"nginx/1.24.0"}, "x-powered-by": {"PHP/8.2.12"}, "content-type": {"text/html; charset=UTF-8"}, "link": {`<http://shop.example/wp-json/>; rel="https://api.w.org/"`}}
	ev.URL = "http://127.0.0.1:4000/shop/item-1"
	sizes := map[kind]int{}
	forEachText(&ev, e.wants, func(k kind, key, text string) { sizes[k] += len(text) })
	t.Logf("bytes per kind: %v", sizes)
	for _, cold := range []bool{false, true} {
		per := map[kind]time.Duration{}
		var total, parse time.Duration
		const n = 300
		for i := 0; i < n; i++ {
			if cold {
				flushCache()
			}
			st := time.Now()
			var ev2 Evidence
			ParseHTML([]byte(e2ePage), &ev2)
			parse += time.Since(st)
			if cold {
				flushCache()
			}
			sc := e.pool.Get().(*scratch)
			sc.nextPage()
			st = time.Now()
			forEachText(&ev, e.wants, func(k kind, key, text string) {
				s := time.Now()
				e.matchText(sc, k, key, text)
				per[k] += time.Since(s)
			})
			e.resolve(sc)
			total += time.Since(st)
			e.pool.Put(sc)
		}
		for k, d := range per {
			t.Logf("cold=%v kind %s: %v/page", cold, kindNames[k], d/n)
		}
		t.Logf("cold=%v analyze total %v/page parse %v/page", cold, total/n, parse/n)
	}
}

func BenchmarkTmpE2EParse(b *testing.B) {
	body := []byte(e2ePage)
	for i := 0; i < b.N; i++ {
		var ev Evidence
		ParseHTML(body, &ev)
	}
}

func BenchmarkTmpE2EAnalyze(b *testing.B) {
	_, e := builtinEngine(b)
	var ev Evidence
	ParseHTML([]byte(e2ePage), &ev)
	ev.Headers = map[string][]string{"server": {"nginx/1.24.0"}, "x-powered-by": {"PHP/8.2.12"}, "content-type": {"text/html; charset=UTF-8"}, "link": {`<http://shop.example/wp-json/>; rel="https://api.w.org/"`}}
	ev.URL = "http://127.0.0.1:4000/shop/item-1"
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e.Analyze(&ev)
	}
}

func BenchmarkTmpE2EDFA(b *testing.B) {
	_, e := builtinEngine(b)
	d := e.kinds[kindHTML].dfa
	var parts [3][]acHit
	var hits []acHit
	hits = d.scan(e2ePage, hits[:0], &parts)
	b.Logf("hits %d over %d bytes", len(hits), len(e2ePage))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		hits = d.scan(e2ePage, hits[:0], &parts)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(e2ePage)), "ns/byte")
}
