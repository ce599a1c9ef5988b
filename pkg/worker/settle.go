package worker

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// requeued is an error a middleware has already decided on: the delivery
// goes back to the queue, to be delivered again after delay. The
// middlewares that decide what a handler's error means pass it on.
type requeued struct {
	delay time.Duration
	err   error
}

// requeue hands the delivery back, to come again after delay.
func requeue(delay time.Duration, err error) error { return &requeued{delay, err} }

func (e *requeued) Error() string { return e.err.Error() }
func (e *requeued) Unwrap() error { return e.err }

// undecided reports whether err is a handler's failure that no middleware
// has decided on yet.
func undecided(err error) bool {
	var r *requeued
	return err != nil && !errors.As(err, &r)
}

// settle ends a delivery as the chain decided: no error acknowledges it
// (its final document is stored, or it was already), an error hands it
// back after the delay the chain chose, or after fallback if none did.
func settle(ctx context.Context, msg jetstream.Msg, err error, fallback time.Duration, log *slog.Logger) {
	if err == nil {
		if err := msg.DoubleAck(ctx); err != nil {
			log.Warn("ack failed", "subject", msg.Subject(), "err", err)
		}
		return
	}
	delay := fallback
	var r *requeued
	if errors.As(err, &r) {
		delay = r.delay
	}
	if err := msg.NakWithDelay(delay); err != nil {
		log.Warn("cannot hand job back: it returns after AckWait", "subject", msg.Subject(), "err", err)
	}
}
