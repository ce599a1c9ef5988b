package intake

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/surveyor/surveyor/pkg/bus"
	"github.com/surveyor/surveyor/pkg/bus/bustest"
	"github.com/surveyor/surveyor/pkg/job"
	"github.com/surveyor/surveyor/pkg/jobstore"
)

// BenchmarkSubmit measures storing distinct jobs through an in-process
// connection, as ingest with the embedded server does, from 64 goroutines.
func BenchmarkSubmit(b *testing.B) {
	env := bustest.Start(b, bus.Config{})
	nc, js := env.ConnectInProcess(b, "bench")
	_ = nc
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	store, err := jobstore.Open(ctx, js)
	if err != nil {
		b.Fatal(err)
	}
	in := New(js, store, Config{CacheTTL: time.Hour, ResultTTL: time.Hour, Log: quiet})
	go in.Run(ctx)
	var n atomic.Int64
	b.SetParallelism(32)
	cpu0 := cpuTime()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			r := job.Request{Kind: job.Scan, URL: fmt.Sprintf("https://s%d.example/", i), Options: []string{"technologies"}}
			if _, _, err := in.Submit(ctx, []job.Request{r}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-us/op")
}

var quiet = slog.New(slog.DiscardHandler)

// cpuTime is the process's user and system CPU time so far: on a shared
// machine CPU per job is steadier than wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
