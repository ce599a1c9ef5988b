// Command httpcheck is the health probe shipped in every Surveyor image. The
// images have no shell, curl or wget, so container healthchecks (compose)
// run this instead: it GETs one URL and exits 0 on a 2xx answer, 1 otherwise.
//
//	httpcheck [-timeout 3s] http://127.0.0.1:8080/readyz
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

func main() { os.Exit(run(os.Args[1:], os.Stderr)) }

// run probes the URL in args and returns the exit code.
func run(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("httpcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	timeout := fs.Duration("timeout", 3*time.Second, "give up after this long")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "usage: httpcheck [-timeout 3s] URL")
		return 2
	}
	if err := probe(fs.Arg(0), *timeout); err != nil {
		fmt.Fprintln(stderr, "httpcheck:", err)
		return 1
	}
	return 0
}

// probe fails unless url answers 2xx within timeout. Redirects are not
// followed: a health endpoint that redirects is misconfigured.
func probe(url string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	client := &http.Client{
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	// Read a little so the server sees a complete exchange, never more.
	io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return errors.New(resp.Status)
	}
	return nil
}
