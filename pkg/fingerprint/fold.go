package fingerprint

import (
	"slices"
	"strings"
)

// Under (?i) RE2 matches k to U+212A (KELVIN SIGN) and s to U+017F (LATIN
// SMALL LETTER LONG S), the only runes outside ASCII that fold to ASCII
// letters. The automaton folds ASCII case only, so a text holding them is
// scanned as a copy with each written as its ASCII letter; offsets found in
// the copy are mapped back to the text's before any regex runs there.

// isFoldHazard reports whether r is one of the two runes.
func isFoldHazard(r rune) bool { return r == '\u212a' || r == '\u017f' }

// textFold maps offsets in the folded copy of a text to the text's.
type textFold struct {
	at    []int // offsets in the copy of the folded runes, increasing
	extra []int // extra[i]: bytes the text holds beyond the copy up to at[i], included
}

// fold returns text with every U+212A written as k and every U+017F as s,
// remembering where, or text itself when it holds neither.
func (f *textFold) fold(text string) string {
	f.at, f.extra = f.at[:0], f.extra[:0]
	nextK, nextS := strings.Index(text, "\u212a"), strings.Index(text, "\u017f")
	if nextK < 0 && nextS < 0 {
		return text
	}
	var b strings.Builder
	b.Grow(len(text))
	done, extra := 0, 0
	for nextK >= 0 || nextS >= 0 {
		i, size, c := nextK, len("\u212a"), byte('k')
		if nextK < 0 || nextS >= 0 && nextS < nextK {
			i, size, c = nextS, len("\u017f"), 's'
		}
		b.WriteString(text[done:i])
		f.at = append(f.at, b.Len())
		b.WriteByte(c)
		extra += size - 1
		f.extra = append(f.extra, extra)
		done = i + size
		if c == 'k' {
			nextK = indexFrom(text, done, "\u212a")
		} else {
			nextS = indexFrom(text, done, "\u017f")
		}
	}
	b.WriteString(text[done:])
	return b.String()
}

func indexFrom(text string, from int, sub string) int {
	if i := strings.Index(text[from:], sub); i >= 0 {
		return from + i
	}
	return -1
}

// orig maps an offset in the folded copy to the same place in the text.
func (f *textFold) orig(off int) int {
	if len(f.at) == 0 {
		return off
	}
	n, _ := slices.BinarySearch(f.at, off) // folded runes before off
	if n == 0 {
		return off
	}
	return off + f.extra[n-1]
}
