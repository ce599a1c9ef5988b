package inspect

import (
	"strings"

	"github.com/surveyor/surveyor/pkg/fingerprint"
)

// Markup is what the security and emails sections need from a page beyond
// the fingerprint evidence. It is filled by Add from the Refs that
// fingerprint.ParseHTMLRefs reports while it reads the page for the
// evidence, so the page is read once.
type Markup struct {
	Mailto  []string // href values of mailto: links
	Active  []string // http:// scripts, stylesheets, frames, objects
	Passive []string // http:// images, audio, video
	Forms   []string // forms posting to http://
}

// maxListed bounds each list of Markup: a page with thousands of insecure
// images needs no more than a handful named.
const maxListed = 50

// Add files one reference of the page under the list it belongs to, if
// any; Refs come in page order.
func (m *Markup) Add(r fingerprint.Ref) {
	u := strings.TrimSpace(r.URL)
	switch r.Tag {
	case "a", "area":
		if hasPrefixFold(u, "mailto:") {
			addListed(&m.Mailto, u)
		}
	case "script", "iframe", "frame", "embed", "object":
		if insecure(u) {
			addListed(&m.Active, u)
		}
	case "link":
		if insecure(u) && loadsTarget(r.Rel) {
			addListed(&m.Active, u)
		}
	case "img", "audio", "video", "source", "track":
		if insecure(u) {
			addListed(&m.Passive, u)
		}
	case "form":
		if insecure(u) {
			addListed(&m.Forms, u)
		}
	}
}

func addListed(list *[]string, v string) {
	if len(*list) < maxListed {
		*list = append(*list, v)
	}
}

// loadsTarget reports whether a link's rel makes the browser load and use
// its target: stylesheet, preload or modulepreload.
func loadsTarget(rel string) bool {
	rel = strings.ToLower(rel)
	return strings.Contains(rel, "stylesheet") || strings.Contains(rel, "preload")
}

func insecure(u string) bool { return hasPrefixFold(u, "http://") }

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}
