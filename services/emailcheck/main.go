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
	service.RunWorker(service.Worker{
		Kind:               job.Email,
		ConcurrencyVar:     "EMAILCHECK_CONCURRENCY",
		DefaultConcurrency: 64,
		DefaultAdminAddr:   "127.0.0.1:9103",
		Configure: func(r *config.Reader, _ *slog.Logger) (service.Build, error) {
			cfg := verify.ConfigFromEnv(r)
			return func(context.Context, *service.Env) (worker.Handler, error) {
				return verify.NewHandler(cfg)
			}, nil
		},
	})
}
