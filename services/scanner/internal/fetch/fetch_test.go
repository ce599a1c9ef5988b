package fetch

import (
	"bytes"
	"compress/gzip"
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/surveyor/surveyor/pkg/netguard"
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
	c := New(Options{Targets: netguard.AllowPrivate, BodyLimit: 1 << 20, MaxRedirects: DefaultMaxRedirects})
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
	c := New(Options{Targets: netguard.AllowPrivate, UserAgent: "SurveyorTest/1.0", MaxRedirects: DefaultMaxRedirects})
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

// TestBodyAnnouncedLength reads bodies whose Content-Length is true, larger
// than the part trusted for sizing the buffer, and a lie: the announced
// length sizes the buffer, never what is kept.
func TestBodyAnnouncedLength(t *testing.T) {
	big := bytes.Repeat([]byte("<p>surveyor</p>\n"), (3<<20)/16) // 3 MiB, over presizeMax
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/big":
			w.Header().Set("Content-Length", strconv.Itoa(len(big)))
			w.Write(big)
		case "/lie":
			// Announce 4 MiB, send 10 bytes, hang up.
			conn, buf, _ := w.(http.Hijacker).Hijack()
			buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 4194304\r\n\r\n0123456789")
			buf.Flush()
			conn.Close()
		}
	}))
	defer srv.Close()
	c := New(Options{Targets: netguard.AllowPrivate, BodyLimit: 4 << 20, MaxRedirects: DefaultMaxRedirects})
	defer c.Close()
	small := New(Options{Targets: netguard.AllowPrivate, BodyLimit: 1 << 20, MaxRedirects: DefaultMaxRedirects})
	defer small.Close()
	for _, tc := range []struct {
		client    *Client
		path      string
		want      []byte
		truncated bool
	}{
		{c, "/big", big, false},
		{small, "/big", big[:1<<20], true}, // over the body limit
		{c, "/lie", []byte("0123456789"), true},
	} {
		resp, err := tc.client.Get(context.Background(), srv.URL+tc.path)
		if err != nil {
			t.Fatalf("%s: %v", tc.path, err)
		}
		if !bytes.Equal(resp.Body, tc.want) || resp.Truncated != tc.truncated {
			t.Errorf("%s: %d bytes (want %d), truncated %v (want %v)", tc.path, len(resp.Body), len(tc.want), resp.Truncated, tc.truncated)
		}
	}
}
