package fetch

import (
	"bytes"
	"compress/gzip"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestBodyLimit(t *testing.T) {
	// A gzip bomb in miniature: 8 MiB of zeros in a few KiB on the wire.
	var bomb bytes.Buffer
	zw := gzip.NewWriter(&bomb)
	zw.Write(make([]byte, 8<<20))
	zw.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Content-Type", "text/plain")
		w.Write(bomb.Bytes())
	}))
	defer srv.Close()
	c := New(Options{AllowPrivate: true, BodyLimit: 1 << 20, MaxRedirects: DefaultMaxRedirects})
	defer c.Close()
	resp, err := c.Get(context.Background(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Body) != 1<<20 || !resp.Truncated || resp.HTML {
		t.Errorf("body %d bytes, truncated %v, html %v", len(resp.Body), resp.Truncated, resp.HTML)
	}
}

func TestBrowserHeadersAndSniffing(t *testing.T) {
	var ua, accept string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ua, accept = r.Header.Get("User-Agent"), r.Header.Get("Accept")
		w.Header()["Content-Type"] = nil // no type: the body is sniffed
		w.Write([]byte("<!DOCTYPE html><html><title>x</title></html>"))
	}))
	defer srv.Close()
	c := New(Options{AllowPrivate: true, UserAgent: "SurveyorTest/1.0", MaxRedirects: DefaultMaxRedirects})
	defer c.Close()
	resp, err := c.Get(context.Background(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if ua != "SurveyorTest/1.0" || !strings.HasPrefix(accept, "text/html") || !resp.HTML || resp.Truncated {
		t.Errorf("ua %q accept %q html %v truncated %v", ua, accept, resp.HTML, resp.Truncated)
	}
	if _, err := c.Get(context.Background(), "ftp://example.com/"); err == nil {
		t.Error("ftp URL accepted")
	}
}

// toUTF8 decodes declared and sniffed charsets; plain ASCII passes as is.
func TestToUTF8(t *testing.T) {
	cases := []struct {
		name, body, ctype, want string
	}{
		{"declared latin-1", "caf\xe9", "text/html; charset=iso-8859-1", "café"},
		{"meta windows-1252", `<meta charset="windows-1252"><p>caf` + "\xe9", "text/html", `<meta charset="windows-1252"><p>café`},
		{"undeclared utf-8", "<p>Müller – straße", "text/html", "<p>Müller – straße"},
		{"undeclared latin-1 bytes", "<p>caf\xe9", "text/html", "<p>café"},
		{"declared utf-8", "<p>ü", "text/html; charset=utf-8", "<p>ü"},
		{"plain ascii", "<p>plain", "text/html", "<p>plain"},
	}
	for _, c := range cases {
		if got := string(toUTF8([]byte(c.body), c.ctype)); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
