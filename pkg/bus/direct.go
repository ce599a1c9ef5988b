package bus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// scanBatch is how many messages one direct get of ScanStream asks for.
const scanBatch = 256

// ScanStream calls fn with every message stream holds, in order of
// sequence, up to the last one stored when it starts; each answer is
// awaited at most timeout. A work-queue stream cannot be browsed with a
// consumer, but the direct get API reads any stream with AllowDirect by
// sequence; its batch form (nats-server 2.11+) answers up to scanBatch
// messages per request, skipping deleted ones, ends each batch with a 204
// "EOB" status message, and answers 404 when nothing is left.
func ScanStream(ctx context.Context, js jetstream.JetStream, stream string, timeout time.Duration, fn func(m *nats.Msg)) error {
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return err
	}
	st := s.CachedInfo().State
	if st.Msgs == 0 {
		return nil
	}
	nc := js.Conn()
	inbox := nc.NewInbox()
	sub, err := nc.SubscribeSync(inbox)
	if err != nil {
		return err
	}
	defer sub.Unsubscribe()
	subject := "$JS.API.DIRECT.GET." + stream
	for next := max(st.FirstSeq, 1); next <= st.LastSeq; {
		req, _ := json.Marshal(struct {
			Seq   uint64 `json:"seq"`
			Batch int    `json:"batch"`
			UpTo  uint64 `json:"up_to_seq"`
		}{next, scanBatch, st.LastSeq})
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
				return nil // nothing left up to the last
			default:
				return fmt.Errorf("direct get from sequence %d: %s %s", next, status, m.Header.Get("Description"))
			}
			seq, err := strconv.ParseUint(m.Header.Get(jetstream.SequenceHeader), 10, 64)
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
