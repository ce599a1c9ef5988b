// Command sitemapper crawls the sites of jobs.sitemap and produces their
// sitemaps (contract §4). The crawler is internal/crawl; connecting it to
// NATS is the worker runtime's job (pkg/worker).
package main

import (
	"fmt"
	"os"

	"github.com/surveyor/surveyor/pkg/config"
	"github.com/surveyor/surveyor/pkg/worker"
	"github.com/surveyor/surveyor/services/sitemapper/internal/crawl"
)

func main() {
	env := config.FromEnv()
	cfg := crawl.ConfigFromEnv(env)
	if err := env.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "sitemapper:", err)
		os.Exit(2)
	}
	var h worker.Handler = crawl.New(cfg, nil)
	// TODO(lead): run h on the worker runtime with cfg.Concurrency.
	fmt.Fprintf(os.Stderr, "sitemapper: handler %T ready; worker runtime not wired yet\n", h)
}
