package bus_test

import (
	"context"
	"testing"
	"time"

	"github.com/surveyor/surveyor/pkg/bus"
	"github.com/surveyor/surveyor/pkg/bus/bustest"
)

// Ingest batch-publishes into JOBS and reads it by direct get at start; a
// process that runs Setup later, even with other settings, keeps both.
func TestSetupKeepsJobsBatchPublishingAndDirectGet(t *testing.T) {
	env := bustest.Start(t, bus.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	check := func(when string, maxMsgs int64) {
		t.Helper()
		s, err := env.JS.Stream(ctx, bus.JobsStream)
		if err != nil {
			t.Fatal(err)
		}
		c := s.CachedInfo().Config
		if !c.AllowBatchPublish || !c.AllowDirect || c.MaxMsgs != maxMsgs {
			t.Fatalf("%s: JOBS batch publishing %v, direct get %v, max messages %d (want %d)",
				when, c.AllowBatchPublish, c.AllowDirect, c.MaxMsgs, maxMsgs)
		}
	}
	check("at start", -1)
	cfg := env.Config
	cfg.JobsMaxMsgs = 500
	if err := bus.Setup(ctx, env.JS, cfg); err != nil {
		t.Fatal(err)
	}
	check("after a second Setup with a queue limit", 500)
}
