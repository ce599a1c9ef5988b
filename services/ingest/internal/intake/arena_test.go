package intake

import (
	"bytes"
	"fmt"
	"testing"
)

func TestDocArenaKeepsDocumentsAndDropsEmptyChunks(t *testing.T) {
	var a docArena
	var refs []docRef
	var docs [][]byte
	// Enough documents for several chunks, and one larger than a chunk.
	for i := 0; i < 3*arenaChunk/100; i++ {
		d := []byte(fmt.Sprintf(`{"job_id":"%08d","pad":"%s"}`, i, bytes.Repeat([]byte("x"), i%90)))
		docs = append(docs, d)
		refs = append(refs, a.add(d))
	}
	big := bytes.Repeat([]byte("y"), arenaChunk+5)
	docs = append(docs, big)
	refs = append(refs, a.add(big))
	if len(a.chunks) < 4 {
		t.Fatalf("%d chunks for more than three chunks of documents", len(a.chunks))
	}
	for i, r := range refs {
		if got := a.get(r); !bytes.Equal(got, docs[i]) {
			t.Fatalf("document %d: got %q", i, got)
		}
	}
	// A handed-out document is not overwritten by later adds (capacity is cut).
	first := a.get(refs[0])
	if cap(first) != len(first) {
		t.Fatalf("get leaves room to append into the arena: len %d cap %d", len(first), cap(first))
	}
	for _, r := range refs {
		if r.chunk == 0 {
			a.release(r)
		}
	}
	if a.chunks[0] != nil {
		t.Fatal("the first chunk is kept after all its documents were released")
	}
	if !bytes.Equal(first, docs[0]) {
		t.Fatal("a released document changed under its reader")
	}
	last := refs[len(refs)-1]
	a.release(last)
	if a.chunks[last.chunk] == nil {
		t.Fatal("the chunk being filled was dropped")
	}
}
