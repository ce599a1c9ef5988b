package fingerprint

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
	trans  []uint32  // (state*stride + class) -> next state*stride | outFlag
	out    [][]int32 // state -> literal ids ending there, suffix links included
	lens   []int     // literal id -> length
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

// scan calls hit(literal id, start offset) for every occurrence of every
// literal in text, in order of their end.
func (d *acDFA) scan(text string, hit func(id int32, start int)) {
	var s uint32
	trans, class := d.trans, &d.class
	for i := 0; i < len(text); i++ {
		s = trans[s+uint32(class[text[i]])]
		if s&outFlag != 0 {
			s &^= outFlag
			for _, id := range d.out[s/d.stride] {
				hit(id, i+1-d.lens[id])
			}
		}
	}
}
