// Command ingest-bare is the baseline of the intake benchmark: ingest's own
// HTTP handler, parsing and validation, answering with a fresh id without
// storing anything. The ratio of ingest to this server is what storing each
// job durably costs.
package main

import (
	"context"
	"fmt"
	"net"
	"os"

	"github.com/google/uuid"

	"github.com/surveyor/surveyor/pkg/job"
	"github.com/surveyor/surveyor/pkg/jobstore"
	"github.com/surveyor/surveyor/services/ingest/internal/api"
	"github.com/surveyor/surveyor/services/ingest/internal/intake"
)

// discard accepts every request and stores nothing.
type discard struct{}

func (discard) Submit(_ context.Context, reqs []job.Request) ([]intake.Outcome, int, error) {
	out := make([]intake.Outcome, len(reqs))
	for i := range out {
		out[i] = intake.Outcome{ID: uuid.NewString(), Status: job.Queued}
	}
	return out, 1, nil
}

func (discard) Get(context.Context, job.Kind, string) (*job.Job, error) {
	return nil, jobstore.ErrNotFound
}

func main() {
	addr := os.Getenv("HTTP_ADDR")
	if addr == "" {
		addr = "127.0.0.1:8081"
	}
	a := &api.API{Jobs: discard{}, Ready: func() error { return nil }}
	srv := a.Server()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "HTTP_ADDR:", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "bare intake listening on http://%s\n", ln.Addr())
	if err := srv.Serve(ln); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
