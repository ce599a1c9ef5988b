package fingerprint

import (
	"cmp"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestACDFAFindsWhatASearchFinds compares the automaton with a plain
// case-insensitive search for every literal at every offset, on texts short
// (one walk) and long (four interleaved walks), with literals planted across
// the boundaries between the parts.
func TestACDFAFindsWhatASearchFinds(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	const alphabet = "abcdeXYZ-/.<> "
	word := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(b)
	}
	var parts [3][]acHit
	for round := range 60 {
		lits := []string{}
		seen := map[string]bool{}
		for len(lits) < 1+rng.IntN(40) {
			l := strings.ToLower(word(1 + rng.IntN(12)))
			if round%3 == 0 {
				l = "wp-content/plugins/" + l // long literals sharing a prefix
			}
			if !seen[l] {
				seen[l] = true
				lits = append(lits, l)
			}
		}
		d := newACDFA(lits)
		size := []int{0, 1, 100, interleaveMin - 1, interleaveMin, 3*interleaveMin + 3}[round%6]
		text := []byte(word(size))
		// Plant literals, upper-cased at random, at and around the part
		// boundaries and at the ends.
		for _, at := range []int{0, size / 4, size / 2, 3 * size / 4, size} {
			for _, shift := range []int{-13, -3, -1, 0, 1} {
				l := lits[rng.IntN(len(lits))]
				if rng.IntN(2) == 0 {
					l = strings.ToUpper(l)
				}
				if p := at + shift; p >= 0 && p+len(l) <= size {
					copy(text[p:], l)
				}
			}
		}
		got := d.scan(string(text), nil, &parts)
		if !slices.IsSortedFunc(got, func(a, b acHit) int {
			return cmp.Compare(a.start+d.lens[a.id], b.start+d.lens[b.id])
		}) {
			t.Fatalf("round %d: hits not in order of their end", round)
		}
		var want []acHit
		lower := strings.ToLower(string(text))
		for i := range lower {
			for id, l := range lits {
				if strings.HasPrefix(lower[i:], l) {
					want = append(want, acHit{id: int32(id), start: i})
				}
			}
		}
		byPlace := func(a, b acHit) int {
			return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(a.id, b.id))
		}
		slices.SortFunc(got, byPlace)
		slices.SortFunc(want, byPlace)
		if !slices.Equal(got, want) {
			t.Fatalf("round %d (%d bytes, %d literals): %d hits, want %d", round, size, len(lits), len(got), len(want))
		}
	}
}

// TestRecipDividesExactly checks the reciprocal that replaces s/stride for
// every stride a class table allows, at the edges of the state range.
func TestRecipDividesExactly(t *testing.T) {
	for stride := uint64(2); stride <= 256; stride++ { // class 0 and at least one literal byte
		recip := ^uint64(0)/stride + 1
		for _, s := range []uint64{0, 1, stride - 1, stride, stride + 1, 1<<20 - 1, 1<<31 + 7, 1<<32 - 1} {
			if q, _ := bits.Mul64(recip, s); q != s/stride {
				t.Fatalf("stride %d: %d/%d gave %d", stride, s, stride, q)
			}
		}
		for range 1000 {
			s := uint64(rand.Uint32())
			if q, _ := bits.Mul64(recip, s); q != s/stride {
				t.Fatalf("stride %d: %d/%d gave %d", stride, s, stride, q)
			}
		}
	}
}
