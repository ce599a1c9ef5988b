package worker

import (
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// keepAlive tells the server every interval that the job is still being
// worked on, which resets its AckWait, until stop is called. Call it with
// AckWait/3: a job that takes longer than AckWait is not handed to another
// worker while this one lives.
func keepAlive(msg jetstream.Msg, every time.Duration) (stop func()) {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				msg.InProgress()
			}
		}
	}()
	return func() { close(done) }
}
