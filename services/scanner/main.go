// Command scanner consumes jobs.scan and answers what a website runs
// (issue 4). The worker runtime (pkg/worker) is being finished by the lead;
// until it is wired here, the binary validates its configuration and builds
// the scanner, which is what a deployment's start-up check needs.
package main

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/surveyor/surveyor/pkg/config"
	"github.com/surveyor/surveyor/pkg/fingerprint"
	"github.com/surveyor/surveyor/pkg/worker"
	"github.com/surveyor/surveyor/services/scanner/internal/scan"
)

func main() {
	env := config.FromEnv()
	cfg := scan.ConfigFromEnv(env)
	if err := env.Err(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	db, err := fingerprint.Builtin()
	if err != nil {
		fmt.Fprintln(os.Stderr, "fingerprints:", err)
		os.Exit(1)
	}
	engine := fingerprint.NewEngine(db)
	var h worker.Handler = scan.New(cfg, func() *fingerprint.Engine { return engine })
	slog.Info("scanner built; waiting for the worker runtime to be wired", "handler", fmt.Sprintf("%T", h), "concurrency", cfg.Concurrency)
}
