// Command emailcheck consumes jobs.email and answers whether an address can
// receive mail (issue 6). The worker runtime (pkg/worker) is wired here by
// the lead; until then the binary validates its configuration and builds
// the handler, which is what a deployment's start-up check needs.
package main

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/surveyor/surveyor/pkg/config"
	"github.com/surveyor/surveyor/services/emailcheck/internal/verify"
)

func main() {
	env := config.FromEnv()
	cfg := verify.ConfigFromEnv(env)
	if err := env.Err(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	h, err := verify.NewHandler(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer h.Close()
	slog.Info("emailcheck built; waiting for the worker runtime to be wired",
		"concurrency", cfg.Concurrency, "per_server", cfg.PerServer, "smtp_port", cfg.SMTPPort)
}
