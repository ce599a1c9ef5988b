package fingerprint

import "math/bits"

// acDFA is an Aho-Corasick automaton compiled to a full transition table
// over byte classes, with ASCII case folded into the classes: one table
// load per input byte, no lower-casing copy of the text.
//
// Transitions are stored pre-multiplied by the class count, and a state
// that ends some literal has outFlag set, so the scan loop needs no
// multiplication and one branch per byte.
type acDFA struct {
	class  [256]uint8
	stride uint32
	// recip is ceil(2^64/stride): the high word of recip*s is s/stride
	// for every 32-bit s, without a division on each hit. (stride is at
	// least 2 when there are literals: class 0 and one literal byte.)
	recip  uint64
	trans  []uint32  // (state*stride + class) -> next state*stride | outFlag
	out    [][]int32 // state -> literal ids ending there, suffix links included
	lens   []int     // literal id -> length
	maxLen int       // the longest literal
}

// acHit is one occurrence of a literal: its id and where it starts.
type acHit struct {
	id    int32
	start int
}

const outFlag = 1 << 31

// newACDFA builds the automaton for lowered ASCII literals; id i is lits[i].
func newACDFA(lits []string) *acDFA {
	d := &acDFA{lens: make([]int, len(lits))}
	// Byte classes: class 0 is every byte no literal uses.
	n := uint8(1)
	for _, l := range lits {
		for i := 0; i < len(l); i++ {
			if c := l[i]; d.class[c] == 0 {
				d.class[c] = n
				n++
			}
		}
	}
	for c := 'A'; c <= 'Z'; c++ {
		d.class[c] = d.class[c+'a'-'A']
	}
	stride := int(n)
	d.stride = uint32(stride)
	d.recip = ^uint64(0)/uint64(stride) + 1

	// Trie; goto table filled with -1 for missing edges.
	type node struct {
		next []int32
		out  []int32
	}
	newNode := func() node {
		nx := make([]int32, stride)
		for i := range nx {
			nx[i] = -1
		}
		return node{next: nx}
	}
	nodes := []node{newNode()}
	for id, l := range lits {
		d.lens[id] = len(l)
		d.maxLen = max(d.maxLen, len(l))
		s := 0
		for i := 0; i < len(l); i++ {
			c := d.class[l[i]]
			if nodes[s].next[c] < 0 {
				nodes[s].next[c] = int32(len(nodes))
				nodes = append(nodes, newNode())
			}
			s = int(nodes[s].next[c])
		}
		nodes[s].out = append(nodes[s].out, int32(id))
	}

	// Breadth-first: complete each state's row from its failure state's.
	fail := make([]int32, len(nodes))
	queue := make([]int32, 0, len(nodes))
	for c := 0; c < stride; c++ {
		if nx := nodes[0].next[c]; nx < 0 {
			nodes[0].next[c] = 0
		} else {
			queue = append(queue, nx)
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		f := fail[s]
		nodes[s].out = append(nodes[s].out, nodes[f].out...)
		for c := 0; c < stride; c++ {
			if nx := nodes[s].next[c]; nx < 0 {
				nodes[s].next[c] = nodes[f].next[c]
			} else {
				fail[nx] = nodes[f].next[c]
				queue = append(queue, nx)
			}
		}
	}

	d.trans = make([]uint32, len(nodes)*stride)
	d.out = make([][]int32, len(nodes))
	for s := range nodes {
		d.out[s] = nodes[s].out
		for c := 0; c < stride; c++ {
			nx := nodes[s].next[c]
			v := uint32(nx) * d.stride
			if len(nodes[nx].out) > 0 {
				v |= outFlag
			}
			d.trans[s*stride+c] = v
		}
	}
	return d
}

// interleaveMin is the shortest text scan cuts into parts. A large
// database's table (megabytes) does not fit the cache, so a single walk
// waits on one memory load per byte; four independent walks in one loop keep
// four loads in flight and scan about 1.7x faster. Short texts are not worth
// the overlap and the bookkeeping.
const interleaveMin = 8 << 10

// scan appends to hits every occurrence of every literal in text, in order
// of their end, and returns the extended slice. parts is scratch space for
// the interleaved walk; its contents are overwritten.
func (d *acDFA) scan(text string, hits []acHit, parts *[3][]acHit) []acHit {
	if d.maxLen == 0 {
		return hits
	}
	if len(text) < interleaveMin {
		return d.finish(text, 0, 0, 0, len(text), hits)
	}
	// Part k reports the literals whose last byte lies in
	// text[bound[k]:bound[k+1]]. Its walk starts maxLen-1 bytes early, from
	// the root, so it also sees those begun in the part before.
	q := len(text) / 4
	bound := [5]int{0, q, 2 * q, 3 * q, len(text)}
	var pos [4]int
	for k := range pos {
		pos[k] = max(bound[k]-(d.maxLen-1), 0)
		if k > 0 {
			parts[k-1] = parts[k-1][:0]
		}
	}
	out := [4]*[]acHit{&hits, &parts[0], &parts[1], &parts[2]}
	trans, class := d.trans, &d.class
	var st [4]uint32
	// Every part has at least q bytes from its start: walk that many in
	// lock step, then finish each part alone.
	for i := 0; i < q; i++ {
		s0 := trans[st[0]+uint32(class[text[pos[0]+i]])]
		s1 := trans[st[1]+uint32(class[text[pos[1]+i]])]
		s2 := trans[st[2]+uint32(class[text[pos[2]+i]])]
		s3 := trans[st[3]+uint32(class[text[pos[3]+i]])]
		st = [4]uint32{s0, s1, s2, s3}
		if (s0|s1|s2|s3)&outFlag == 0 {
			continue
		}
		for k := range st {
			if st[k]&outFlag != 0 {
				st[k] &^= outFlag
				if end := pos[k] + i + 1; end > bound[k] {
					*out[k] = d.report(st[k], end, *out[k])
				}
			}
		}
	}
	for k := range st {
		*out[k] = d.finish(text, st[k], pos[k]+q, bound[k], bound[k+1], *out[k])
	}
	for _, p := range parts {
		hits = append(hits, p...)
	}
	return hits
}

// finish walks on from state s over text[i:to], reporting the literals
// that end after the offset after.
func (d *acDFA) finish(text string, s uint32, i, after, to int, hits []acHit) []acHit {
	trans, class := d.trans, &d.class
	for ; i < to; i++ {
		s = trans[s+uint32(class[text[i]])]
		if s&outFlag != 0 {
			s &^= outFlag
			if i+1 > after {
				hits = d.report(s, i+1, hits)
			}
		}
	}
	return hits
}

// report appends the literals that end at end in state s.
func (d *acDFA) report(s uint32, end int, hits []acHit) []acHit {
	state, _ := bits.Mul64(d.recip, uint64(s))
	for _, id := range d.out[state] {
		hits = append(hits, acHit{id: id, start: end - d.lens[id]})
	}
	return hits
}
