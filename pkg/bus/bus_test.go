package bus_test

import (
	"context"
	"testing"
	"time"

	"github.com/surveyor/surveyor/pkg/bus"
	"github.com/surveyor/surveyor/pkg/bus/bustest"
)

// Ingest batch-publishes into JOBS and the status bucket's stream; a
// process that runs Setup later must not switch that off, even when it
// changes the bucket's settings.
func TestSetupKeepsBatchPublishing(t *testing.T) {
	env := bustest.Start(t, bus.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, name := range []string{bus.JobsStream, bus.StatusStream} {
		s, err := env.JS.Stream(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if !s.CachedInfo().Config.AllowBatchPublish {
			t.Fatalf("%s does not allow batch publishing", name)
		}
	}
	if err := bus.Setup(ctx, env.JS, env.Config); err != nil {
		t.Fatal(err)
	}
	s, err := env.JS.Stream(ctx, bus.StatusStream)
	if err != nil {
		t.Fatal(err)
	}
	info := s.CachedInfo()
	if !info.Config.AllowBatchPublish {
		t.Fatal("a second Setup switched batch publishing off on the status stream")
	}
	// A changed bucket setting is applied, and batch publishing stays on.
	cfg := env.Config
	cfg.ResultTTL = 2 * time.Hour
	if err := bus.Setup(ctx, env.JS, cfg); err != nil {
		t.Fatal(err)
	}
	s, err = env.JS.Stream(ctx, bus.StatusStream)
	if err != nil {
		t.Fatal(err)
	}
	if c := s.CachedInfo().Config; c.MaxAge != 2*time.Hour || !c.AllowBatchPublish {
		t.Fatalf("after a TTL change: max age %s, batch publishing %v", c.MaxAge, c.AllowBatchPublish)
	}
}
