package fingerprint

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// A deterministic corpus of full-size pages for the benchmark and the
// engine-vs-naive check on realistic input. Each platform emits the marks
// the real software is known to emit (generator tags, asset paths,
// headers, cookies); filler is the markup real pages carry in bulk: menus,
// article text, product grids, inline SVG, CSS and JSON state.

type corpusPage struct {
	platform string
	ev       Evidence
}

type pageBuilder struct {
	r       *rand.Rand
	head    strings.Builder
	body    strings.Builder
	tail    strings.Builder // scripts before </body>
	headers map[string][]string
	cookies map[string]string
	host    string
}

func (p *pageBuilder) header(k, v string) { p.headers[k] = append(p.headers[k], v) }
func (p *pageBuilder) pick(s ...string) string {
	return s[p.r.IntN(len(s))]
}
func (p *pageBuilder) ver(major ...int) string {
	return fmt.Sprintf("%d.%d.%d", major[p.r.IntN(len(major))], p.r.IntN(12), p.r.IntN(20))
}
func (p *pageBuilder) hex(n int) string {
	const digits = "0123456789abcdef"
	b := make([]byte, n)
	for i := range b {
		b[i] = digits[p.r.IntN(16)]
	}
	return string(b)
}

type platform struct {
	name  string
	build func(p *pageBuilder)
}

var platforms = []platform{
	{"wordpress", func(p *pageBuilder) {
		v, theme := p.ver(5, 6), p.pick("astra", "twentytwentyfour", "generatepress", "kadence", "divi")
		p.header("x-powered-by", "PHP/"+p.ver(7, 8))
		p.header("link", fmt.Sprintf("<https://%s/wp-json/>; rel=\"https://api.w.org/\"", p.host))
		fmt.Fprintf(&p.head, `<meta name="generator" content="WordPress %s" />
<link rel="https://api.w.org/" href="https://%s/wp-json/" />
<link rel='stylesheet' id='%s-style-css' href='https://%s/wp-content/themes/%s/style.css?ver=%s' media='all' />
<script src="https://%s/wp-includes/js/jquery/jquery.min.js?ver=3.7.1" id="jquery-core-js"></script>
<script src="https://%s/wp-includes/js/jquery/jquery-migrate.min.js?ver=3.4.1" id="jquery-migrate-js"></script>
<!-- This site is optimized with the Yoast SEO plugin v%s - https://yoast.com/wordpress/plugins/seo/ -->
`, v, p.host, theme, p.host, theme, v, p.host, p.host, p.ver(20, 21))
		if p.r.IntN(2) == 0 {
			p.cookies["woocommerce_items_in_cart"] = "1"
			fmt.Fprintf(&p.head, `<link rel='stylesheet' id='woocommerce-general-css' href='https://%s/wp-content/plugins/woocommerce/assets/css/woocommerce.css?ver=%s' />
<meta name="generator" content="WooCommerce %s" />
`, p.host, p.ver(8), p.ver(8))
			p.body.WriteString(`<div class="woocommerce"><ul class="products columns-4">`)
		}
		if p.r.IntN(2) == 0 {
			fmt.Fprintf(&p.head, `<link rel='stylesheet' id='elementor-frontend-css' href='https://%s/wp-content/plugins/elementor/assets/css/frontend.min.css?ver=%s' />
<meta name="generator" content="Elementor %s; features: e_dom_optimization; settings: css_print_method-external" />
`, p.host, p.ver(3), p.ver(3))
		}
	}},
	{"shopify", func(p *pageBuilder) {
		p.header("x-shopid", fmt.Sprint(p.r.IntN(90000000)))
		p.header("powered-by", "Shopify")
		p.header("server", "cloudflare")
		p.header("cf-ray", p.hex(16)+"-FRA")
		p.cookies["_shopify_y"] = p.hex(32)
		p.cookies["cart_currency"] = "EUR"
		fmt.Fprintf(&p.head, `<link rel="preconnect" href="https://cdn.shopify.com" crossorigin>
<link href="//%s/cdn/shop/t/12/assets/base.css?v=%d" rel="stylesheet" type="text/css" media="all" />
<script src="//cdn.shopify.com/s/files/1/0%d/files/theme.js?v=%d" defer="defer"></script>
<script>var Shopify = Shopify || {};Shopify.shop = "%s.myshopify.com";Shopify.locale = "en";Shopify.currency = {"active":"EUR","rate":"1.0"};Shopify.theme = {"name":"Dawn","id":%d,"schema_name":"Dawn","schema_version":"%s"};</script>
<script src="/cdn/shopifycloud/boomerang/shopify-boomerang-1.0.0.min.js" defer></script>
`, p.host, p.r.IntN(1e9), p.r.IntN(9999), p.r.IntN(1e9), p.hex(8), p.r.IntN(1e11), p.ver(12, 13))
	}},
	{"drupal", func(p *pageBuilder) {
		major := p.pick("9", "10")
		p.header("x-generator", "Drupal "+major+" (https://www.drupal.org)")
		p.header("x-drupal-cache", "HIT")
		p.header("x-drupal-dynamic-cache", "MISS")
		p.header("server", "Apache/2.4.57 (Debian)")
		fmt.Fprintf(&p.head, `<meta name="Generator" content="Drupal %s (https://www.drupal.org)" />
<link rel="stylesheet" media="all" href="/sites/default/files/css/css_%s.css?delta=0&amp;language=en&amp;theme=olivero" />
<script type="application/json" data-drupal-selector="drupal-settings-json">{"path":{"baseUrl":"\/","pathPrefix":"","currentPath":"node\/%d"},"pluralDelimiter":"\u0003","ajaxPageState":{"libraries":"%s","theme":"olivero"}}</script>
<script src="/core/misc/drupal.js?v=%s"></script>
`, major, p.hex(40), p.r.IntN(5000), p.hex(60), p.ver(9, 10))
	}},
	{"react", func(p *pageBuilder) {
		p.header("server", "nginx/1."+fmt.Sprint(18+p.r.IntN(8))+".0")
		fmt.Fprintf(&p.head, `<link href="/static/css/main.%s.css" rel="stylesheet">
<script defer="defer" src="/static/js/main.%s.js"></script>
<script src="https://unpkg.com/react@18.2.0/umd/react.production.min.js" crossorigin></script>
`, p.hex(8), p.hex(8))
		p.body.WriteString(`<div id="root" data-reactroot="">`)
	}},
	{"nextjs", func(p *pageBuilder) {
		p.header("x-powered-by", "Next.js")
		p.header("server", "Vercel")
		p.header("x-vercel-id", "fra1::"+p.hex(20))
		p.header("x-nextjs-cache", "HIT")
		id := p.hex(21)
		fmt.Fprintf(&p.head, `<link rel="preload" href="/_next/static/media/%s.woff2" as="font" crossorigin="" type="font/woff2"/>
<link rel="stylesheet" href="/_next/static/css/%s.css" data-precedence="next"/>
<script src="/_next/static/chunks/webpack-%s.js" defer=""></script>
<script src="/_next/static/chunks/framework-%s.js" defer=""></script>
<script src="/_next/static/%s/_buildManifest.js" defer=""></script>
`, p.hex(16), p.hex(16), p.hex(16), p.hex(16), id)
		fmt.Fprintf(&p.tail, `<script id="__NEXT_DATA__" type="application/json">{"props":{"pageProps":{"items":[%s]}},"page":"/","query":{},"buildId":"%s","nextExport":false,"isFallback":false,"gsp":true}</script>`,
			jsonItems(p, 40+p.r.IntN(200)), id)
	}},
	{"magento", func(p *pageBuilder) {
		p.cookies["mage-cache-storage"] = "{}"
		p.cookies["mage-cache-sessid"] = "true"
		p.cookies["form_key"] = p.hex(16)
		p.header("x-magento-tags", "store,cms_b")
		p.header("server", "nginx")
		p.header("x-powered-by", "PHP/8.2.12")
		ver := p.r.IntN(1e10)
		fmt.Fprintf(&p.head, `<link rel="stylesheet" type="text/css" media="all" href="https://%s/static/version%d/frontend/Magento/luma/en_US/mage/calendar.css" />
<script type="text/javascript" src="https://%s/static/version%d/frontend/Magento/luma/en_US/requirejs/require.js"></script>
<script type="text/javascript" src="https://%s/static/version%d/frontend/Magento/luma/en_US/mage/requirejs/mixins.js"></script>
<script type="text/x-magento-init">{"*":{"Magento_PageCache/js/form-key-provider":{"isPaginationCacheEnabled":0}}}</script>
`, p.host, ver, p.host, ver, p.host, ver)
	}},
	{"joomla", func(p *pageBuilder) {
		p.header("x-powered-by", "PHP/7.4.33")
		p.cookies[p.hex(32)] = p.hex(26)
		fmt.Fprintf(&p.head, `<meta name="generator" content="Joomla! - Open Source Content Management" />
<script src="/media/jui/js/jquery.min.js?%s"></script>
<script src="/media/system/js/caption.js?%s"></script>
<link href="/templates/protostar/css/template.css?%s" rel="stylesheet" />
`, p.hex(32), p.hex(32), p.hex(32))
	}},
	{"ghost", func(p *pageBuilder) {
		v := p.ver(5)
		fmt.Fprintf(&p.head, `<meta name="generator" content="Ghost %s">
<link rel="stylesheet" type="text/css" href="/assets/built/screen.css?v=%s">
<script defer src="https://cdn.jsdelivr.net/ghost/portal@~2.36/umd/portal.min.js" data-i18n="false" data-ghost="https://%s/" crossorigin="anonymous"></script>
`, v[:strings.LastIndexByte(v, '.')], p.hex(10), p.host)
	}},
	{"hugo", func(p *pageBuilder) {
		p.header("server", "GitHub.com")
		fmt.Fprintf(&p.head, `<meta name="generator" content="Hugo 0.%d.%d">
<link rel="stylesheet" href="/css/main.min.%s.css" integrity="sha256-%s">
`, 100+p.r.IntN(25), p.r.IntN(3), p.hex(64), p.hex(43))
	}},
	{"gatsby", func(p *pageBuilder) {
		fmt.Fprintf(&p.head, `<meta name="generator" content="Gatsby 5.%d.0"/>
<link as="fetch" rel="preload" href="/page-data/index/page-data.json" crossorigin="anonymous"/>
<link as="fetch" rel="preload" href="/page-data/app-data.json" crossorigin="anonymous"/>
`, p.r.IntN(13))
		p.body.WriteString(`<div id="___gatsby"><div style="outline:none" tabindex="-1" id="gatsby-focus-wrapper">`)
		fmt.Fprintf(&p.tail, `<script src="/webpack-runtime-%s.js" async></script><script src="/framework-%s.js" async></script>`, p.hex(20), p.hex(20))
	}},
	{"nuxt", func(p *pageBuilder) {
		p.body.WriteString(`<div id="__nuxt"><div id="__layout">`)
		fmt.Fprintf(&p.head, `<link rel="preload" href="/_nuxt/%s.js" as="script"><link rel="stylesheet" href="/_nuxt/css/%s.css">`, p.hex(8), p.hex(8))
		fmt.Fprintf(&p.tail, `<script>window.__NUXT__=(function(a,b,c){return {layout:"default",data:[{items:[%s]}],fetch:{},error:null,serverRendered:true}}(null,false,"en"));</script><script src="/_nuxt/%s.js" defer></script>`,
			jsonItems(p, 30+p.r.IntN(120)), p.hex(8))
	}},
	{"angular", func(p *pageBuilder) {
		fmt.Fprintf(&p.head, `<link rel="stylesheet" href="styles.%s.css">`, p.hex(16))
		fmt.Fprintf(&p.body, `<app-root _nghost-ng-c%d="" ng-version="17.%d.%d">`, p.r.IntN(1e9), p.r.IntN(4), p.r.IntN(9))
		fmt.Fprintf(&p.tail, `<script src="runtime.%s.js" type="module"></script><script src="polyfills.%s.js" type="module"></script><script src="main.%s.js" type="module"></script>`, p.hex(16), p.hex(16), p.hex(16))
	}},
	{"static-bootstrap", func(p *pageBuilder) {
		p.header("server", "Apache/2.4.41 (Ubuntu)")
		fmt.Fprintf(&p.head, `<link href="https://cdn.jsdelivr.net/npm/bootstrap@5.3.%d/dist/css/bootstrap.min.css" rel="stylesheet" integrity="sha384-%s" crossorigin="anonymous">
<link rel="stylesheet" href="https://cdnjs.cloudflare.com/ajax/libs/font-awesome/6.%d.0/css/all.min.css">
<link href="https://fonts.googleapis.com/css2?family=Roboto:wght@400;700&display=swap" rel="stylesheet">
`, p.r.IntN(4), p.hex(48), p.r.IntN(6))
		fmt.Fprintf(&p.tail, `<script src="https://code.jquery.com/jquery-3.%d.%d.min.js"></script><script src="https://cdn.jsdelivr.net/npm/bootstrap@5.3.2/dist/js/bootstrap.bundle.min.js"></script>`, p.r.IntN(8), p.r.IntN(2))
	}},
	{"squarespace", func(p *pageBuilder) {
		p.header("server", "Squarespace")
		p.cookies["crumb"] = p.hex(32)
		fmt.Fprintf(&p.head, `<!-- This is Squarespace. --><!-- %s -->
<script src="https://static1.squarespace.com/static/vta/%s/scripts/site-bundle.%s.js"></script>
<link rel="stylesheet" type="text/css" href="https://static1.squarespace.com/static/versioned-site-css/%s/site.css"/>
`, p.hex(12), p.hex(24), p.hex(32), p.hex(24))
	}},
	{"wix", func(p *pageBuilder) {
		p.header("x-wix-request-id", p.hex(10)+"."+p.hex(10))
		p.header("server", "Pepyaka")
		fmt.Fprintf(&p.head, `<meta name="generator" content="Wix.com Website Builder"/>
<link rel="preconnect" href="https://static.parastorage.com" crossorigin>
<script src="https://static.parastorage.com/unpkg/react@18.2.0/umd/react.production.min.js"></script>
`)
	}},
	{"laravel", func(p *pageBuilder) {
		p.cookies["laravel_session"] = p.hex(40)
		p.cookies["XSRF-TOKEN"] = p.hex(40)
		p.header("server", "nginx/1.22.1")
		fmt.Fprintf(&p.head, `<meta name="csrf-token" content="%s"><link rel="stylesheet" href="/build/assets/app-%s.css"><script type="module" src="/build/assets/app-%s.js"></script>`, p.hex(40), p.hex(8), p.hex(8))
	}},
	{"django", func(p *pageBuilder) {
		p.cookies["csrftoken"] = p.hex(32)
		p.header("server", "gunicorn")
		fmt.Fprintf(&p.body, `<form method="post"><input type="hidden" name="csrfmiddlewaretoken" value="%s"></form>`, p.hex(64))
		fmt.Fprintf(&p.head, `<link rel="stylesheet" href="/static/css/site.%s.css">`, p.hex(12))
	}},
}

// addOns are third-party services any site may embed.
var addOns = []func(p *pageBuilder){
	func(p *pageBuilder) {
		id := "G-" + strings.ToUpper(p.hex(10))
		fmt.Fprintf(&p.head, `<script async src="https://www.googletagmanager.com/gtag/js?id=%s"></script><script>window.dataLayer = window.dataLayer || [];function gtag(){dataLayer.push(arguments);}gtag('js', new Date());gtag('config', '%s');</script>`, id, id)
		p.cookies["_ga"] = "GA1.1." + p.hex(10)
	},
	func(p *pageBuilder) {
		fmt.Fprintf(&p.head, `<script>(function(w,d,s,l,i){w[l]=w[l]||[];w[l].push({'gtm.start':new Date().getTime(),event:'gtm.js'});var f=d.getElementsByTagName(s)[0],j=d.createElement(s),dl=l!='dataLayer'?'&l='+l:'';j.async=true;j.src='https://www.googletagmanager.com/gtm.js?id='+i+dl;f.parentNode.insertBefore(j,f);})(window,document,'script','dataLayer','GTM-%s');</script>`, strings.ToUpper(p.hex(7)))
	},
	func(p *pageBuilder) {
		fmt.Fprintf(&p.tail, `<script>!function(f,b,e,v,n,t,s){if(f.fbq)return;n=f.fbq=function(){n.callMethod?n.callMethod.apply(n,arguments):n.queue.push(arguments)};t=b.createElement(e);t.async=!0;t.src=v;s=b.getElementsByTagName(e)[0];s.parentNode.insertBefore(t,s)}(window, document,'script','https://connect.facebook.net/en_US/fbevents.js');fbq('init', '%d');fbq('track', 'PageView');</script>`, p.r.IntN(1e15))
	},
	func(p *pageBuilder) {
		fmt.Fprintf(&p.tail, `<script>(function(h,o,t,j,a,r){h.hj=h.hj||function(){(h.hj.q=h.hj.q||[]).push(arguments)};h._hjSettings={hjid:%d,hjsv:6};a=o.getElementsByTagName('head')[0];r=o.createElement('script');r.async=1;r.src=t+h._hjSettings.hjid+j+h._hjSettings.hjsv;a.appendChild(r);})(window,document,'https://static.hotjar.com/c/hotjar-','.js?sv=');</script>`, p.r.IntN(1e7))
	},
	func(p *pageBuilder) {
		p.header("server", "cloudflare")
		p.header("cf-ray", p.hex(16)+"-AMS")
		p.cookies["__cf_bm"] = p.hex(43)
	},
	func(p *pageBuilder) {
		fmt.Fprintf(&p.head, `<script id="Cookiebot" src="https://consent.cookiebot.com/uc.js" data-cbid="%s-%s" type="text/javascript" async></script>`, p.hex(8), p.hex(12))
	},
	func(p *pageBuilder) {
		p.tail.WriteString(`<script src="https://js.stripe.com/v3/"></script>`)
	},
	func(p *pageBuilder) {
		fmt.Fprintf(&p.tail, `<script type="text/javascript" id="hs-script-loader" async defer src="//js.hs-scripts.com/%d.js"></script>`, p.r.IntN(1e7))
	},
	func(p *pageBuilder) {
		fmt.Fprintf(&p.body, `<iframe width="560" height="315" src="https://www.youtube.com/embed/%s" title="YouTube video player" frameborder="0" allowfullscreen></iframe>`, p.hex(11))
	},
	func(p *pageBuilder) {
		fmt.Fprintf(&p.tail, `<script src="https://www.google.com/recaptcha/api.js?render=%s"></script>`, p.hex(40))
	},
	func(p *pageBuilder) {
		fmt.Fprintf(&p.tail, `<script>window.intercomSettings = {api_base: "https://api-iam.intercom.io", app_id: "%s"};</script><script src="https://widget.intercom.io/widget/%s" async></script>`, p.hex(8), p.hex(8))
	},
}

var fillerWords = strings.Fields(`the of and to in is for on with as by at from this that our your new more about
product service team contact price shipping return account search menu blog news support customer order free
best quality design home page learn read share follow privacy policy terms cookie data analytics summer sale
collection feature guide update release community open source developer platform cloud secure fast simple`)

func (p *pageBuilder) words(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(fillerWords[p.r.IntN(len(fillerWords))])
	}
	return b.String()
}

func jsonItems(p *pageBuilder, n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":%d,"slug":"%s","title":"%s","price":%d.%02d,"image":"/images/%s.jpg","tags":["%s","%s"]}`,
			p.r.IntN(1e6), strings.ReplaceAll(p.words(3), " ", "-"), p.words(5), p.r.IntN(500), p.r.IntN(100), p.hex(12), p.words(1), p.words(1))
	}
	return b.String()
}

// filler appends one block of bulk markup.
func (p *pageBuilder) filler() {
	switch p.r.IntN(6) {
	case 0: // menu
		p.body.WriteString(`<nav class="main-navigation" aria-label="Primary"><ul id="menu-primary" class="menu nav-menu">`)
		for i := 0; i < 8+p.r.IntN(20); i++ {
			fmt.Fprintf(&p.body, `<li id="menu-item-%d" class="menu-item menu-item-type-post_type menu-item-object-page"><a href="/%s/">%s</a></li>`,
				p.r.IntN(9999), strings.ReplaceAll(p.words(2), " ", "-"), p.words(2))
		}
		p.body.WriteString("</ul></nav>\n")
	case 1: // article
		fmt.Fprintf(&p.body, `<article class="post-%d post type-post status-publish"><header class="entry-header"><h2 class="entry-title"><a href="/%s/" rel="bookmark">%s</a></h2></header><div class="entry-content">`,
			p.r.IntN(99999), strings.ReplaceAll(p.words(4), " ", "-"), p.words(6))
		for i := 0; i < 2+p.r.IntN(6); i++ {
			fmt.Fprintf(&p.body, "<p>%s</p>\n", p.words(40+p.r.IntN(80)))
		}
		p.body.WriteString("</div></article>\n")
	case 2: // product grid
		p.body.WriteString(`<div class="grid grid-cols-2 md:grid-cols-4 gap-4">`)
		for i := 0; i < 4+p.r.IntN(12); i++ {
			fmt.Fprintf(&p.body, `<div class="product-card relative flex flex-col rounded-lg border border-gray-200 bg-white p-4 shadow-sm hover:shadow-md" data-product-id="%d"><a href="/products/%s"><img loading="lazy" src="/images/%s_400x.jpg" srcset="/images/%s_400x.jpg 400w, /images/%s_800x.jpg 800w" alt="%s" width="400" height="400"></a><h3 class="mt-2 text-sm font-medium text-gray-900">%s</h3><span class="price text-lg font-semibold">&euro;%d,%02d</span><button type="button" class="btn btn-primary add-to-cart" data-variant="%d">Add to cart</button></div>`,
				p.r.IntN(1e8), strings.ReplaceAll(p.words(3), " ", "-"), p.hex(12), p.hex(12), p.hex(12), p.words(3), p.words(4), p.r.IntN(300), p.r.IntN(100), p.r.IntN(1e8))
		}
		p.body.WriteString("</div>\n")
	case 3: // inline SVG icon set
		p.body.WriteString(`<svg xmlns="http://www.w3.org/2000/svg" style="display:none">`)
		for i := 0; i < 3+p.r.IntN(10); i++ {
			fmt.Fprintf(&p.body, `<symbol id="icon-%s" viewBox="0 0 24 24"><path d="M%d.%d %d.%dL%d %dl%d.%d-%d.%dc%d.%d 0 %d-%d %d-%dz" fill="currentColor"/></symbol>`,
				p.words(1), p.r.IntN(24), p.r.IntN(99), p.r.IntN(24), p.r.IntN(99), p.r.IntN(24), p.r.IntN(24), p.r.IntN(9), p.r.IntN(99), p.r.IntN(9), p.r.IntN(99), p.r.IntN(9), p.r.IntN(99), p.r.IntN(9), p.r.IntN(9), p.r.IntN(9), p.r.IntN(9))
		}
		p.body.WriteString("</svg>\n")
	case 4: // inline CSS
		p.head.WriteString("<style>")
		for i := 0; i < 10+p.r.IntN(40); i++ {
			fmt.Fprintf(&p.head, `.%s-%s{display:flex;margin:%dpx %dpx;padding:0 %drem;color:#%s;font-family:-apple-system,BlinkMacSystemFont,"Segoe UI",Roboto,sans-serif}@media (min-width:%dpx){.%s{width:%d%%}}`,
				p.words(1), p.hex(4), p.r.IntN(40), p.r.IntN(40), p.r.IntN(4), p.hex(6), 480+p.r.IntN(1000), p.words(1), p.r.IntN(100))
		}
		p.head.WriteString("</style>\n")
	default: // JSON-LD and inline state
		fmt.Fprintf(&p.tail, `<script type="application/ld+json">{"@context":"https://schema.org","@type":"ItemList","itemListElement":[%s]}</script>`, jsonItems(p, 5+p.r.IntN(30)))
	}
}

// buildCorpus makes n pages of minKB..maxKB, cycling through platforms.
func buildCorpus(n, minKB, maxKB int, seed uint64) []corpusPage {
	r := rand.New(rand.NewPCG(seed, 7))
	pages := make([]corpusPage, 0, n)
	for i := 0; i < n; i++ {
		pl := platforms[i%len(platforms)]
		p := &pageBuilder{r: r, headers: map[string][]string{"content-type": {"text/html; charset=utf-8"}}, cookies: map[string]string{},
			host: fmt.Sprintf("www.%s-%d.example", strings.ReplaceAll(p0(r), " ", ""), i)}
		pl.build(p)
		for _, j := range r.Perm(len(addOns))[:r.IntN(5)] {
			addOns[j](p)
		}
		target := (minKB + r.IntN(maxKB-minKB+1)) << 10
		for p.head.Len()+p.body.Len()+p.tail.Len() < target {
			p.filler()
		}
		page := fmt.Sprintf("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>%s</title>\n%s</head>\n<body class=\"home page-template-default\">\n%s\n%s</body></html>",
			p.words(5), p.head.String(), p.body.String(), p.tail.String())
		cp := corpusPage{platform: pl.name, ev: Evidence{URL: "https://" + p.host + "/", Status: 200, Headers: p.headers, Cookies: p.cookies}}
		ParseHTML([]byte(page), &cp.ev)
		pages = append(pages, cp)
	}
	return pages
}

func p0(r *rand.Rand) string { return fillerWords[r.IntN(len(fillerWords))] }
