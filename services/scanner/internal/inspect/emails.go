package inspect

import (
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// emailRE finds address-shaped text; candidates are then checked by
// plausible, which rejects asset names such as logo@2x.png.
var emailRE = regexp.MustCompile(`(?i)[a-z0-9][a-z0-9._%+-]{0,63}@[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+`)

// The common ways people hide an address from harvesters: "name [at]
// example [dot] com", "name(at)example(dot)com", "name {at} example {dot} com".
var (
	obfuscatedAt  = regexp.MustCompile(`(?i)\s*[\[\(\{<]\s*at\s*[\]\)\}>]\s*`)
	obfuscatedDot = regexp.MustCompile(`(?i)\s*[\[\(\{<]\s*dot\s*[\]\)\}>]\s*`)
)

// assetSuffixes are file extensions that end "name@2x.png"-style names and
// version pins such as "pkg@1.2.3" never reach here (digits fail the TLD
// check).
var assetSuffixes = map[string]bool{
	"png": true, "jpg": true, "jpeg": true, "gif": true, "svg": true, "webp": true, "avif": true,
	"ico": true, "bmp": true, "tif": true, "tiff": true, "css": true, "js": true, "mjs": true,
	"map": true, "json": true, "woff": true, "woff2": true, "ttf": true, "otf": true, "eot": true,
	"mp4": true, "webm": true, "mp3": true, "ogg": true, "wav": true, "pdf": true, "zip": true,
	"html": true, "htm": true, "php": true, "asp": true, "aspx": true, "jsp": true, "txt": true, "xml": true,
}

// maxEmails bounds the section; a page listing more is a directory.
const maxEmails = 200

// Emails returns the addresses in mailto hrefs and in the page text,
// lower-cased, de-duplicated, in order of appearance.
func Emails(mailtos []string, text string) []string {
	out := []string{}
	seen := map[string]bool{}
	add := func(a string) {
		a = strings.ToLower(strings.Trim(a, "."))
		if !seen[a] && plausible(a) && len(out) < maxEmails {
			seen[a] = true
			out = append(out, a)
		}
	}
	for _, href := range mailtos {
		to, _, _ := strings.Cut(href[len("mailto:"):], "?")
		if dec, err := url.PathUnescape(to); err == nil {
			to = dec
		}
		for _, a := range strings.Split(to, ",") {
			if m := emailRE.FindString(strings.TrimSpace(a)); m != "" {
				add(m)
			}
		}
	}
	text = obfuscatedAt.ReplaceAllString(text, "@")
	text = obfuscatedDot.ReplaceAllString(text, ".")
	for _, m := range emailRE.FindAllString(text, -1) {
		add(m)
	}
	return out
}

// plausible rejects matches that are not deliverable-looking addresses.
func plausible(a string) bool {
	local, domain, ok := strings.Cut(a, "@")
	if !ok || local == "" || strings.Contains(local, "..") || strings.HasSuffix(local, ".") {
		return false
	}
	labels := strings.Split(domain, ".")
	tld := labels[len(labels)-1]
	if len(tld) < 2 || len(tld) > 24 || assetSuffixes[tld] {
		return false
	}
	return !slices.ContainsFunc([]byte(tld), func(c byte) bool { return c < 'a' || c > 'z' })
}
