package intake

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/surveyor/surveyor/pkg/bus"
)

// scanBatch is how many messages one direct get asks for.
const scanBatch = 256

// scanJobs calls fn with every message JOBS holds from sequence first to
// last, in order. A work-queue stream cannot be browsed with a consumer,
// but the direct get API reads it by sequence; its batch form
// (nats-server 2.11+, AllowDirect on the stream) answers up to scanBatch
// messages per request, skipping deleted ones, and ends each batch with a
// 204 "EOB" status message, or answers 404 when nothing is left.
func scanJobs(ctx context.Context, nc *nats.Conn, first, last uint64, timeout time.Duration, fn func(m *nats.Msg)) error {
	inbox := nats.NewInbox()
	sub, err := nc.SubscribeSync(inbox)
	if err != nil {
		return err
	}
	defer sub.Unsubscribe()
	subject := "$JS.API.DIRECT.GET." + bus.JobsStream
	for next := max(first, 1); next <= last; {
		req, _ := json.Marshal(struct {
			Seq   uint64 `json:"seq"`
			Batch int    `json:"batch"`
			UpTo  uint64 `json:"up_to_seq"`
		}{next, scanBatch, last})
		if err := nc.PublishRequest(subject, inbox, req); err != nil {
			return err
		}
		got := 0
	batch:
		for {
			rctx, cancel := context.WithTimeout(ctx, timeout)
			m, err := sub.NextMsgWithContext(rctx)
			cancel()
			if err != nil {
				return fmt.Errorf("direct get from sequence %d: %w", next, err)
			}
			switch status := m.Header.Get("Status"); status {
			case "":
			case "204": // end of this batch
				break batch
			case "404":
				return nil // nothing left up to last
			default:
				return fmt.Errorf("direct get from sequence %d: %s %s", next, status, m.Header.Get("Description"))
			}
			seq, err := strconv.ParseUint(m.Header.Get("Nats-Sequence"), 10, 64)
			if err != nil || seq < next {
				return errors.New("direct get answered without a valid Nats-Sequence")
			}
			fn(m)
			next, got = seq+1, got+1
		}
		if got == 0 {
			return nil
		}
	}
	return nil
}
