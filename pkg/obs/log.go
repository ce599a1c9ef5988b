package obs

import (
	"log/slog"
	"os"
	"strings"
)

// Logger returns a JSON logger on stderr tagged with the service name.
// LOG_LEVEL (debug, info, warn, error) sets the threshold.
func Logger(service string) *slog.Logger {
	level := slog.LevelInfo
	switch strings.ToLower(os.Getenv("LOG_LEVEL")) {
	case "debug":
		level = slog.LevelDebug
	case "warn":
		level = slog.LevelWarn
	case "error":
		level = slog.LevelError
	}
	h := slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: level})
	return slog.New(h).With("service", service)
}
