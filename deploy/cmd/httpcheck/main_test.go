package main

import (
	"bytes"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestExitCodes(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) })
	mux.HandleFunc("/down", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "nats not connected", http.StatusServiceUnavailable)
	})
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/ok", http.StatusFound)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // never answers before the client gives up
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	// A port nothing listens on: bind one, note it, close it.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String() + "/healthz"
	l.Close()

	cases := []struct {
		name string
		args []string
		want int
		msg  string
	}{
		{"2xx", []string{srv.URL + "/ok"}, 0, ""},
		{"503", []string{srv.URL + "/down"}, 1, "503"},
		{"redirect not followed", []string{srv.URL + "/moved"}, 1, "302"},
		{"timeout", []string{"-timeout", "100ms", srv.URL + "/slow"}, 1, "deadline"},
		{"connection refused", []string{closed}, 1, "refused"},
		{"no url", nil, 2, "usage"},
		{"bad flag", []string{"-nope", srv.URL}, 2, "not defined"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stderr bytes.Buffer
			if got := run(c.args, &stderr); got != c.want {
				t.Fatalf("exit %d, want %d (stderr %q)", got, c.want, stderr.String())
			}
			if !strings.Contains(stderr.String(), c.msg) {
				t.Fatalf("stderr %q does not mention %q", stderr.String(), c.msg)
			}
		})
	}
}
