package sitemaps

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"strings"
	"testing"
)

const urlset = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc> http://site.test/a?x=1&amp;y=2 </loc><lastmod>2024-01-02</lastmod><priority>0.5</priority></url>
  <url><loc>http://site.test/b</loc></url>
  <url><lastmod>2024-01-02</lastmod></url>
</urlset>`

func TestReadURLSet(t *testing.T) {
	f, err := Read(strings.NewReader(urlset), 100)
	if err != nil {
		t.Fatal(err)
	}
	if f.Index || len(f.Entries) != 2 {
		t.Fatalf("got %+v", f)
	}
	if e := f.Entries[0]; e.Loc != "http://site.test/a?x=1&y=2" || e.LastMod != "2024-01-02" {
		t.Errorf("entry 0 = %+v", e)
	}
	if e := f.Entries[1]; e.Loc != "http://site.test/b" || e.LastMod != "" {
		t.Errorf("entry 1 = %+v", e)
	}
}

func TestReadIndexGzipped(t *testing.T) {
	index := `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
	<sitemap><loc>http://site.test/s1.xml.gz</loc><lastmod>2024-05-06T07:08:09Z</lastmod></sitemap>
	<sitemap><loc>http://site.test/s2.xml</loc></sitemap></sitemapindex>`
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte(index))
	zw.Close()
	f, err := Read(&buf, 100)
	if err != nil {
		t.Fatal(err)
	}
	if !f.Index || len(f.Entries) != 2 || f.Entries[0].Loc != "http://site.test/s1.xml.gz" || f.Entries[0].LastMod != "2024-05-06T07:08:09Z" {
		t.Fatalf("got %+v", f)
	}
}

func TestReadText(t *testing.T) {
	f, err := Read(strings.NewReader("\xef\xbb\xbfhttp://site.test/a\n\n  http://site.test/b  \r\n"), 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Entries) != 2 || f.Entries[1].Loc != "http://site.test/b" {
		t.Fatalf("got %+v", f)
	}
}

func TestReadCapsEntries(t *testing.T) {
	var b strings.Builder
	b.WriteString("<urlset>")
	for i := 0; i < 30; i++ {
		fmt.Fprintf(&b, "<url><loc>http://site.test/%d</loc></url>", i)
	}
	b.WriteString("</urlset>")
	f, err := Read(strings.NewReader(b.String()), 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Entries) != 10 || f.Dropped != 20 {
		t.Fatalf("entries %d dropped %d", len(f.Entries), f.Dropped)
	}
}

func TestReadBrokenKeepsPrefix(t *testing.T) {
	f, err := Read(strings.NewReader("<urlset><url><loc>http://site.test/a</loc></url><url><loc>http://site"), 10)
	if err == nil {
		t.Fatal("want an error for a cut-off file")
	}
	if len(f.Entries) != 1 {
		t.Fatalf("got %+v", f)
	}
}

func TestReadGarbageGzip(t *testing.T) {
	if _, err := Read(strings.NewReader("\x1f\x8bnot gzip at all"), 10); err == nil {
		t.Fatal("want an error for a bad gzip stream")
	}
}
