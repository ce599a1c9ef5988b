package intake

// docArena holds documents in large append-only chunks: one heap object
// per chunk rather than per document. A chunk is dropped when the last of
// its documents is released; its bytes are never rewritten, so a document
// handed out by get stays valid after it is released.
type docArena struct {
	chunks [][]byte
	live   []int32 // documents not yet released, per chunk
}

// arenaChunk is the size of a chunk: about three thousand job documents.
const arenaChunk = 1 << 20

// docRef locates a document in its arena.
type docRef struct{ chunk, off, len uint32 }

func (a *docArena) add(doc []byte) docRef {
	n := len(a.chunks)
	if n == 0 || cap(a.chunks[n-1])-len(a.chunks[n-1]) < len(doc) {
		a.chunks = append(a.chunks, make([]byte, 0, max(arenaChunk, len(doc))))
		a.live = append(a.live, 0)
		n++
	}
	c := a.chunks[n-1]
	r := docRef{chunk: uint32(n - 1), off: uint32(len(c)), len: uint32(len(doc))}
	a.chunks[n-1] = append(c, doc...)
	a.live[n-1]++
	return r
}

func (a *docArena) get(r docRef) []byte {
	end := r.off + r.len
	return a.chunks[r.chunk][r.off:end:end]
}

// release forgets a document; the chunk goes once none of its documents is
// left and it is no longer the one being filled.
func (a *docArena) release(r docRef) {
	a.live[r.chunk]--
	if a.live[r.chunk] == 0 && int(r.chunk) != len(a.chunks)-1 {
		a.chunks[r.chunk] = nil
	}
}
