package inspect

import (
	"bytes"
	"strings"

	"golang.org/x/net/html"
)

// Markup is what the security and emails sections need from a page beyond
// the fingerprint evidence.
type Markup struct {
	Mailto  []string // href values of mailto: links
	Active  []string // http:// scripts, stylesheets, frames, objects
	Passive []string // http:// images, audio, video
	Forms   []string // forms posting to http://
}

// maxListed bounds each list of Markup: a page with thousands of insecure
// images needs no more than a handful named.
const maxListed = 50

// ScanMarkup reads the page once with the HTML tokenizer.
func ScanMarkup(body []byte) Markup {
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

func insecure(u string) bool { return hasPrefixFold(u, "http://") }

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}
