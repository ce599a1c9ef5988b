package bus

import (
	"bytes"
	"iter"

	"github.com/nats-io/nats.go"
)

// Announce tells the other ingest replicas, on AcceptedSubject, of the
// documents of jobs that replica stored in JOBS: one per line (a JSON
// document holds no raw newline), in messages no larger than the connection
// allows, with AnnouncerHeader naming the replica. It is best effort: a lost
// announcement only leaves a job unanswered elsewhere until a worker starts
// it or that replica restarts.
func Announce(nc *nats.Conn, replica string, docs iter.Seq[[]byte]) {
	limit := int(nc.MaxPayload()) - 1024 // room for the header
	var body []byte
	flush := func() {
		if len(body) == 0 {
			return
		}
		nc.PublishMsg(&nats.Msg{Subject: AcceptedSubject, Data: body, Header: nats.Header{AnnouncerHeader: {replica}}})
		body = nil
	}
	for doc := range docs {
		if len(body) > 0 && len(body)+1+len(doc) > limit {
			flush()
		}
		if len(body) > 0 {
			body = append(body, '\n')
		}
		body = append(body, doc...)
	}
	flush()
}

// Accepted reads an announcement: the replica that sent it and its
// documents, each a copy (a slice would keep the whole message alive).
func Accepted(m *nats.Msg) (replica string, docs iter.Seq[[]byte]) {
	return m.Header.Get(AnnouncerHeader), func(yield func([]byte) bool) {
		for doc := range bytes.SplitSeq(m.Data, []byte{'\n'}) {
			if !yield(bytes.Clone(doc)) {
				return
			}
		}
	}
}
