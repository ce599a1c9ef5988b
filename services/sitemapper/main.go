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
	service.RunWorker(sitemapper(&settings{}))
}

// sitemapper is the sitemapper binary with its settings in cfg.
func sitemapper(cfg *settings) service.Worker {
	return service.Worker{
		Kind:               job.Sitemap,
		ConcurrencyVar:     "SITEMAPPER_CONCURRENCY",
		DefaultConcurrency: 4,
		DefaultAdminAddr:   "127.0.0.1:9102",
		Settings:           cfg,
		Prepare: func(*slog.Logger) (service.Build, error) {
			return func(context.Context, *service.Env) (worker.Handler, error) {
				return crawl.New(cfg.Crawl, nil), nil
			}, nil
		},
	}
}

// settings are the sitemapper's variables beyond every worker's.
type settings struct {
	Crawl crawl.Config
}

func (c *settings) Register(s *config.Set) {
	service.TargetsVar(s, &c.Crawl.Targets)
	service.DNSServerVar(s, &c.Crawl.DNSServer)
	c.Crawl.Register(s)
}

func (c *settings) Validate() error { return c.Crawl.Validate() }
