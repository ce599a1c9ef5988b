// Command sitemapper consumes jobs.sitemap and crawls one site per job,
// producing its page list and the sitemaps.org XML that ingest serves.
package main

import (
	"context"
	"log/slog"

	"github.com/surveyor/surveyor/pkg/config"
	"github.com/surveyor/surveyor/pkg/job"
	"github.com/surveyor/surveyor/pkg/service"
	"github.com/surveyor/surveyor/pkg/worker"
	"github.com/surveyor/surveyor/services/sitemapper/internal/crawl"
)

func main() {
	service.RunWorker(service.Worker{
		Kind:               job.Sitemap,
		ConcurrencyVar:     "SITEMAPPER_CONCURRENCY",
		DefaultConcurrency: 4,
		DefaultAdminAddr:   "127.0.0.1:9102",
		Configure: func(r *config.Reader, _ *slog.Logger) (service.Build, error) {
			cfg := crawl.ConfigFromEnv(r)
			return func(context.Context, *service.Env) (worker.Handler, error) {
				return crawl.New(cfg, nil), nil
			}, nil
		},
	})
}
