package worker

import (
	"context"
	"encoding/json"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/surveyor/surveyor/pkg/bus"
)

// announceEvery is how often a worker tells ingest it is alive.
const announceEvery = 2 * time.Second

// announce tells ingest this worker's capacity and keeps Pending fresh,
// until ctx ends.
func (r *Runtime) announce(ctx context.Context, cons jetstream.Consumer) {
	nc := r.js.Conn()
	beat, _ := json.Marshal(map[string]any{"id": r.id, "kind": r.cfg.Kind, "concurrency": r.cfg.Concurrency})
	t := time.NewTicker(announceEvery)
	defer t.Stop()
	for {
		nc.Publish(bus.WorkersSubject(r.cfg.Kind), beat)
		ictx, cancel := context.WithTimeout(ctx, announceEvery)
		if info, err := cons.Info(ictx); err == nil {
			r.mu.Lock()
			r.pending = info.NumPending + uint64(info.NumAckPending)
			r.mu.Unlock()
		}
		cancel()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Pending is the consumer's backlog seen at the last refresh.
func (r *Runtime) Pending() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.pending
}
