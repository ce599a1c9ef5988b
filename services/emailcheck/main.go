// Command emailcheck consumes jobs.email and answers whether an address can
// receive mail: syntax, DNS and an SMTP probe that never sends DATA.
package main

import (
	"context"
	"log/slog"

	"github.com/surveyor/surveyor/pkg/config"
	"github.com/surveyor/surveyor/pkg/job"
	"github.com/surveyor/surveyor/pkg/service"
	"github.com/surveyor/surveyor/pkg/worker"
	"github.com/surveyor/surveyor/services/emailcheck/internal/verify"
)

func main() {
	var h *verify.Handler
	service.RunWorker(emailcheck(&settings{}, &h))
	// The runtime has stopped (SIGTERM) and its validations have ended:
	// say QUIT to the pooled sessions rather than just hanging up.
	if h != nil {
		h.Close()
	}
}

// emailcheck is the emailcheck binary with its settings in cfg; the
// handler it builds is put in *built. Its EMAILCHECK_CONCURRENCY is the
// runtime's: validations run inside Handle.
func emailcheck(cfg *settings, built **verify.Handler) service.Worker {
	return service.Worker{
		Kind:               job.Email,
		ConcurrencyVar:     "EMAILCHECK_CONCURRENCY",
		DefaultConcurrency: 64,
		DefaultAdminAddr:   "127.0.0.1:9103",
		Settings:           cfg,
		Prepare: func(*slog.Logger) (service.Build, error) {
			return func(context.Context, *service.Env) (worker.Handler, error) {
				h, err := verify.NewHandler(cfg.Verify)
				*built = h
				return h, err
			}, nil
		},
	}
}

// settings are emailcheck's variables beyond every worker's.
type settings struct {
	Verify verify.Config
}

func (c *settings) Register(s *config.Set) {
	service.TargetsVar(s, &c.Verify.Targets)
	service.DNSServerVar(s, &c.Verify.DNSServer)
	service.CacheTTLVar(s, &c.Verify.CacheTTL)
	c.Verify.Register(s)
}

func (c *settings) Validate() error { return c.Verify.Validate() }
