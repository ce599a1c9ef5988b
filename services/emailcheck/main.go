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
	service.RunWorker(emailcheck(&settings{}))
}

// emailcheck is the emailcheck binary with its settings in cfg. Its
// EMAILCHECK_CONCURRENCY is the runtime's: validations run inside Handle.
// The runtime closes the handler at shutdown, which says QUIT to the
// pooled SMTP sessions rather than just hanging up.
func emailcheck(cfg *settings) service.Worker {
	return service.Worker{
		Kind:               job.Email,
		ConcurrencyVar:     "EMAILCHECK_CONCURRENCY",
		DefaultConcurrency: 64,
		DefaultAdminAddr:   "127.0.0.1:9103",
		Settings:           cfg,
		Prepare: func(*slog.Logger) (service.Build, error) {
			return func(context.Context, *service.Env) (worker.Handler, error) {
				return verify.NewHandler(cfg.Verify)
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
