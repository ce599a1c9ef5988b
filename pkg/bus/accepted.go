package bus

import (
	"bytes"
	"iter"
	"sync"

	"github.com/nats-io/nats.go"
)

// Announce tells the other ingest replicas, on AcceptedSubject, of jobs
// this replica stored in JOBS: their documents, one per line (a JSON
// document holds no raw newline), in messages no larger than the
// connection allows, with AnnouncerHeader naming the replica. It is best
// effort: a lost announcement only leaves a job unanswered elsewhere until
// a worker starts it or that replica restarts.
func Announce(nc *nats.Conn, replica string, stored []Msg) {
	limit := int(nc.MaxPayload()) - 1024 // room for the header
	buf := bodies.Get().(*[]byte)
	defer bodies.Put(buf)
	for len(stored) > 0 {
		body := (*buf)[:0]
		n := 0
		for ; n < len(stored) && (n == 0 || len(body)+1+len(stored[n].Data) <= limit); n++ {
			if n > 0 {
				body = append(body, '\n')
			}
			body = append(body, stored[n].Data...)
		}
		// PublishMsg copies the body: the buffer serves the next one.
		nc.PublishMsg(&nats.Msg{Subject: AcceptedSubject, Data: body, Header: nats.Header{AnnouncerHeader: {replica}}})
		*buf = body
		stored = stored[n:]
	}
}

// bodies holds the buffers of announcements, which ingest sends for every
// batch it stores.
var bodies = sync.Pool{New: func() any { return new([]byte) }}

// Accepted reads an announcement: the replica that sent it and its
// documents, slices of the message's body. A caller that keeps one copies
// it (ingest copies a waiting job's document into its arena).
func Accepted(m *nats.Msg) (replica string, docs iter.Seq[[]byte]) {
	return m.Header.Get(AnnouncerHeader), func(yield func([]byte) bool) {
		for doc := range bytes.SplitSeq(m.Data, []byte{'\n'}) {
			if !yield(doc) {
				return
			}
		}
	}
}
