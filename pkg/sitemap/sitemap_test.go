package sitemap

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"strings"
	"testing"

	"github.com/surveyor/surveyor/pkg/job"
)

type urlset struct {
	XMLName xml.Name `xml:"http://www.sitemaps.org/schemas/sitemap/0.9 urlset"`
	URLs    []struct {
		Loc     string `xml:"loc"`
		LastMod string `xml:"lastmod"`
	} `xml:"url"`
}

func parse(t *testing.T, b []byte) urlset {
	t.Helper()
	var u urlset
	if err := xml.Unmarshal(b, &u); err != nil {
		t.Fatalf("invalid XML: %v\n%s", err, b)
	}
	return u
}

func html(url string) job.SitemapPage {
	return job.SitemapPage{URL: url, Status: 200, ContentType: "text/html; charset=utf-8"}
}

func TestWriteXMLListsOnlyIndexablePages(t *testing.T) {
	ok := html("https://example.com/")
	ok.LastMod = "2024-03-05T10:20:30+01:00"
	self := html("https://example.com/self")
	self.Canonical = "https://example.com/self"
	noindex := html("https://example.com/noindex")
	noindex.Noindex = true
	canon := html("https://example.com/copy")
	canon.Canonical = "https://example.com/"
	missing := html("https://example.com/missing")
	missing.Status = 404
	pdf := html("https://example.com/a.pdf")
	pdf.ContentType = "application/pdf"
	failed := html("https://example.com/slow")
	failed.Status, failed.Error = 0, "timeout"
	xhtml := html("https://example.com/x")
	xhtml.ContentType = "application/xhtml+xml"
	xhtml.LastMod = "2024-02"

	var buf bytes.Buffer
	if err := WriteXML(&buf, []job.SitemapPage{ok, noindex, self, canon, missing, pdf, failed, xhtml}); err != nil {
		t.Fatal(err)
	}
	got := parse(t, buf.Bytes())
	want := []string{"https://example.com/", "https://example.com/self", "https://example.com/x"}
	if len(got.URLs) != len(want) {
		t.Fatalf("got %d URLs, want %v:\n%s", len(got.URLs), want, buf.Bytes())
	}
	for i, w := range want {
		if got.URLs[i].Loc != w {
			t.Errorf("url %d = %q, want %q", i, got.URLs[i].Loc, w)
		}
	}
	if got.URLs[0].LastMod != "2024-03-05T10:20:30+01:00" || got.URLs[2].LastMod != "2024-02" {
		t.Errorf("lastmod = %q, %q", got.URLs[0].LastMod, got.URLs[2].LastMod)
	}
	if got.URLs[1].LastMod != "" {
		t.Errorf("page without lastmod got %q", got.URLs[1].LastMod)
	}
}

func TestWriteXMLEscapes(t *testing.T) {
	raw := `https://example.com/q?a=1&b='x'&c="<y>"&d=é`
	var buf bytes.Buffer
	if err := WriteXML(&buf, []job.SitemapPage{html(raw)}); err != nil {
		t.Fatal(err)
	}
	s := buf.String()
	if strings.Contains(s, "&b") || strings.Contains(s, "<y>") || strings.Contains(s, "'x'") {
		t.Fatalf("special characters not escaped:\n%s", s)
	}
	got := parse(t, buf.Bytes())
	if want := `https://example.com/q?a=1&b='x'&c="<y>"&d=%C3%A9`; got.URLs[0].Loc != want {
		t.Fatalf("loc = %q, want %q", got.URLs[0].Loc, want)
	}
}

func TestWriteXMLDropsBadLastMod(t *testing.T) {
	p := html("https://example.com/")
	p.LastMod = "yesterday"
	var buf bytes.Buffer
	if err := WriteXML(&buf, []job.SitemapPage{p}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "lastmod") {
		t.Fatalf("invalid date written:\n%s", buf.String())
	}
}

func TestWriteXMLCapsAtMaxURLs(t *testing.T) {
	pages := make([]job.SitemapPage, MaxURLs+10)
	for i := range pages {
		pages[i] = html(fmt.Sprintf("https://example.com/p%d", i))
	}
	var buf bytes.Buffer
	if err := WriteXML(&buf, pages); err != nil {
		t.Fatal(err)
	}
	got := parse(t, buf.Bytes())
	if len(got.URLs) != MaxURLs {
		t.Fatalf("got %d URLs, want %d", len(got.URLs), MaxURLs)
	}
	if last := got.URLs[MaxURLs-1].Loc; last != fmt.Sprintf("https://example.com/p%d", MaxURLs-1) {
		t.Fatalf("last URL %q: order not kept", last)
	}
}

func TestWriteXMLCapsAtMaxBytes(t *testing.T) {
	if raceEnabled {
		t.Skip("50 MiB of output is too slow under the race detector")
	}
	long := html("https://example.com/" + strings.Repeat("a", 1<<20))
	pages := make([]job.SitemapPage, 60) // 60 MiB of entries
	for i := range pages {
		pages[i] = long
	}
	var buf bytes.Buffer
	if err := WriteXML(&buf, pages); err != nil {
		t.Fatal(err)
	}
	if buf.Len() > MaxBytes {
		t.Fatalf("file is %d bytes, over %d", buf.Len(), MaxBytes)
	}
	if n := bytes.Count(buf.Bytes(), []byte("<url>")); n != MaxBytes>>20-1 {
		t.Fatalf("%d entries of 1 MiB, want %d", n, MaxBytes>>20-1)
	}
	if !bytes.HasSuffix(buf.Bytes(), []byte("</url>\n</urlset>\n")) {
		t.Fatal("file not closed after the last whole entry")
	}
}

func TestNormalizeLastMod(t *testing.T) {
	for in, want := range map[string]string{
		"2024-01-02":                    "2024-01-02",
		"2024":                          "2024",
		"2024-01-02T03:04:05Z":          "2024-01-02T03:04:05Z",
		"2024-01-02T03:04:05.123Z":      "2024-01-02T03:04:05Z",
		"2024-01-02T03:04+02:00":        "2024-01-02T03:04:00+02:00",
		" 2024-01-02T03:04:05-05:00":    "2024-01-02T03:04:05-05:00",
		"2024-13-01":                    "",
		"Tue, 02 Jan 2024 03:04:05 GMT": "",
		"":                              "",
	} {
		if got := NormalizeLastMod(in); got != want {
			t.Errorf("NormalizeLastMod(%q) = %q, want %q", in, got, want)
		}
	}
}
