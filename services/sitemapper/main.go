// Command sitemapper consumes jobs.sitemap and crawls one site per job,
// producing its page list and the sitemaps.org XML that ingest serves.
package main

import (
	"context"

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
		Setup: func(_ context.Context, env *service.Env) (worker.Handler, error) {
			return crawl.New(crawl.ConfigFromEnv(env.Config), nil), nil
		},
	})
}
