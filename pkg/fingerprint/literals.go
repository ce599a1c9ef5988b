package fingerprint

import (
	"regexp/syntax"
	"slices"
	"unicode"
	"unicode/utf8"
)

// Literal analysis of a regex, used to decide where it can possibly match.
//
// All literals are folded to lower-case ASCII: the prefilter scans text with
// ASCII case folded, and a literal with any other character is not used.
// Under (?i), RE2 also lets 'k' match U+212A (Kelvin) and 's' match U+017F
// (long s); the engine scans a copy of the text with those two folded to
// 'k' and 's' (see textFold), so folding them here is exact, and lengths
// (byteLen) are measured in that copy, where each is one byte.

const (
	maxSetSize   = 16  // strings in one exact set
	maxSetStrLen = 64  // bytes in one exact string
	minClauseLen = 3   // shorter literals say too little to filter on
	maxClauses   = 4   // literals a pattern must contain, best first
	maxSpread    = 16  // fixed anchor: allowed spread of its offset from the match start
	maxAnchorPre = 256 // fixed anchor: largest offset from the match start
)

// analysis is what the engine needs to know about one regex.
type analysis struct {
	// clauses: every match contains at least one string of each clause.
	clauses [][]string
	anchor  anchorSpec
	// looksBehind: an assertion (^, \b, \B) may read the character before
	// the position it is at, so the regex must not run on a cut text.
	looksBehind bool
}

func analyze(src string) analysis {
	re, err := syntax.Parse("(?i)"+src, syntax.Perl)
	if err != nil {
		return analysis{looksBehind: true} // cannot happen: src compiled
	}
	re = re.Simplify()
	var a analysis
	for _, c := range required(re) {
		if minLen(c) >= minClauseLen && !slices.ContainsFunc(a.clauses, func(d []string) bool { return slices.Equal(c, d) }) {
			a.clauses = append(a.clauses, c)
		}
	}
	slices.SortStableFunc(a.clauses, func(x, y []string) int { return minLen(y) - minLen(x) })
	if len(a.clauses) > maxClauses {
		a.clauses = a.clauses[:maxClauses]
	}
	a.anchor = findAnchor(re)
	a.looksBehind = readsBehind(re)
	return a
}

func readsBehind(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpBeginLine, syntax.OpBeginText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return true
	}
	return slices.ContainsFunc(re.Sub, readsBehind)
}

func minLen(set []string) int {
	n := -1
	for _, s := range set {
		if n < 0 || len(s) < n {
			n = len(s)
		}
	}
	return n
}

// foldByte maps a rune to the lower-case ASCII byte the prefilter sees.
func foldByte(r rune) (byte, bool) {
	switch {
	case r < utf8.RuneSelf:
		if r >= 'A' && r <= 'Z' {
			r += 'a' - 'A'
		}
		return byte(r), true
	case r == '\u212a':
		return 'k', true
	case r == '\u017f':
		return 's', true
	}
	return 0, false
}

// exact returns every string re can match (folded), or nil when unknown or
// too many. "" in the set means re can match the empty string.
func exact(re *syntax.Regexp) []string {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText,
		syntax.OpEndText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return []string{""}
	case syntax.OpLiteral:
		b := make([]byte, 0, len(re.Rune))
		for _, r := range re.Rune {
			c, ok := foldByte(r)
			if !ok {
				return nil
			}
			b = append(b, c)
		}
		if len(b) > maxSetStrLen {
			return nil
		}
		return []string{string(b)}
	case syntax.OpCharClass:
		var set []string
		total := 0
		for i := 0; i+1 < len(re.Rune); i += 2 {
			total += int(re.Rune[i+1]-re.Rune[i]) + 1
			if total > 64 {
				return nil
			}
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				c, ok := foldByte(r)
				if !ok {
					return nil
				}
				if s := string(c); !slices.Contains(set, s) {
					set = append(set, s)
				}
			}
		}
		if len(set) == 0 || len(set) > 8 {
			return nil
		}
		return set
	case syntax.OpCapture:
		return exact(re.Sub[0])
	case syntax.OpQuest:
		s := exact(re.Sub[0])
		if s == nil {
			return nil
		}
		return union(s, []string{""})
	case syntax.OpConcat:
		out := []string{""}
		for _, sub := range re.Sub {
			out = cross(out, exact(sub))
			if out == nil {
				return nil
			}
		}
		return out
	case syntax.OpAlternate:
		var out []string
		for _, sub := range re.Sub {
			s := exact(sub)
			if s == nil {
				return nil
			}
			if out = union(out, s); out == nil {
				return nil
			}
		}
		return out
	}
	return nil
}

// cross is every a followed by every b, or nil when unknown or too big.
func cross(a, b []string) []string {
	if a == nil || b == nil || len(a)*len(b) > maxSetSize {
		return nil
	}
	out := make([]string, 0, len(a)*len(b))
	for _, x := range a {
		for _, y := range b {
			if len(x)+len(y) > maxSetStrLen {
				return nil
			}
			if s := x + y; !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}

func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	if len(out) > maxSetSize {
		return nil
	}
	return out
}

// required returns clauses (sets of strings) such that every match of re
// contains a string of each clause.
func required(re *syntax.Regexp) [][]string {
	if s := exact(re); s != nil {
		if slices.Contains(s, "") {
			return nil
		}
		return [][]string{s}
	}
	switch re.Op {
	case syntax.OpLiteral: // too long or not all ASCII: its longest usable run
		var best, run []byte
		for _, r := range append(re.Rune, utf8.RuneError) {
			if c, ok := foldByte(r); ok && len(run) < maxSetStrLen {
				run = append(run, c)
				continue
			}
			if len(run) > len(best) {
				best = slices.Clone(run)
			}
			run = run[:0]
		}
		if len(best) == 0 {
			return nil
		}
		return [][]string{{string(best)}}
	case syntax.OpCapture, syntax.OpPlus:
		return required(re.Sub[0])
	case syntax.OpConcat:
		var out [][]string
		run := []string{""}
		flush := func() {
			if !slices.Contains(run, "") {
				out = append(out, run)
			}
			run = []string{""}
		}
		for _, sub := range re.Sub {
			e := exact(sub)
			if e == nil {
				flush()
				out = append(out, required(sub)...)
				continue
			}
			if next := cross(run, e); next != nil {
				run = next
				continue
			}
			flush()
			run = e
		}
		flush()
		return out
	case syntax.OpAlternate:
		var set []string
		for _, sub := range re.Sub {
			cs := required(sub)
			if len(cs) == 0 {
				return nil
			}
			best := cs[0]
			for _, c := range cs[1:] {
				if minLen(c) > minLen(best) {
					best = c
				}
			}
			if set = union(set, best); set == nil {
				return nil
			}
		}
		return [][]string{set}
	}
	return nil
}

// byteLen is the range of lengths in bytes a match of re can have in the
// folded text the prefilter scans; max < 0 means unbounded. There U+212A
// and U+017F are one byte; elsewhere a length is the rune's in UTF-8.
func byteLen(re *syntax.Regexp) (min, max int) {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText,
		syntax.OpEndText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return 0, 0
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			lo, hi := scanLen(r, r)
			if re.Flags&syntax.FoldCase != 0 {
				for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
					l, h := scanLen(f, f)
					lo, hi = minInt(lo, l), maxInt(hi, h)
				}
			}
			min, max = min+lo, max+hi
		}
		return min, max
	case syntax.OpCharClass:
		min, max = utf8.UTFMax, 0
		for i := 0; i+1 < len(re.Rune); i += 2 {
			lo, hi := scanLen(re.Rune[i], re.Rune[i+1])
			min, max = minInt(min, lo), maxInt(max, hi)
		}
		if max == 0 {
			return 0, 0
		}
		return min, max
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return 1, utf8.UTFMax
	case syntax.OpCapture:
		return byteLen(re.Sub[0])
	case syntax.OpQuest:
		_, max = byteLen(re.Sub[0])
		return 0, max
	case syntax.OpStar:
		return 0, -1
	case syntax.OpPlus:
		min, _ = byteLen(re.Sub[0])
		return min, -1
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			lo, hi := byteLen(sub)
			min += lo
			if max >= 0 {
				max = addMax(max, hi)
			}
		}
		return min, max
	case syntax.OpAlternate:
		for i, sub := range re.Sub {
			lo, hi := byteLen(sub)
			if i == 0 || lo < min {
				min = lo
			}
			if i == 0 || max >= 0 && (hi < 0 || hi > max) {
				max = hi
			}
		}
		return min, max
	case syntax.OpRepeat:
		lo, hi := byteLen(re.Sub[0])
		if re.Max < 0 || hi < 0 {
			return lo * re.Min, -1
		}
		return lo * re.Min, hi * re.Max
	}
	return 0, -1
}

// scanLen is the range of lengths in the folded text of the runes lo..hi.
func scanLen(lo, hi rune) (min, max int) {
	min, max = runeLen(lo), runeLen(hi)
	if lo <= '\u017f' && '\u017f' <= hi || lo <= '\u212a' && '\u212a' <= hi {
		min = 1
	}
	if lo == hi && isFoldHazard(lo) {
		max = 1
	}
	return min, max
}

func runeLen(r rune) int {
	if n := utf8.RuneLen(r); n > 0 {
		return n
	}
	return 3 // surrogates cannot occur in valid UTF-8 anyway
}

func addMax(a, b int) int {
	if a < 0 || b < 0 {
		return -1
	}
	return a + b
}

func minInt(a, b int) int {
	if a < b {
		return a
	}
	return b
}

func maxInt(a, b int) int {
	if a > b {
		return a
	}
	return b
}

// findAnchor picks the run of literal elements of the top-level
// concatenation that best locates matches. A fixed anchor sits at a
// bounded, nearly fixed offset from the match start, so the regex is tried
// anchored at those starts. Otherwise a window anchor bounds where a match
// around each occurrence can lie (see side); the longer literal wins.
func findAnchor(re *syntax.Regexp) anchorSpec {
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	subs := []*syntax.Regexp{re}
	if re.Op == syntax.OpConcat {
		subs = re.Sub
	}
	var best anchorSpec
	bestLen := 0
	lo, hi := 0, 0
	for i := range subs {
		run, j := []string{""}, i
		for ; j < len(subs); j++ {
			next := cross(run, exact(subs[j]))
			if next == nil || len(next) > 8 {
				break
			}
			run = next
		}
		fixed := hi >= 0 && hi <= maxAnchorPre && hi-lo <= maxSpread
		if n := minLen(run); !slices.Contains(run, "") && n >= minClauseLen && (n > bestLen || n == bestLen && fixed && !best.fixed) {
			cand := anchorSpec{lits: run, fixed: fixed, minPre: lo, maxPre: hi, post: sideOf(subs[j:])}
			if fixed {
				best, bestLen = cand, n
			} else if cand.pre = sideOf(subs[:i]); cand.pre.ok {
				best, bestLen = cand, n
			}
		}
		l, h := byteLen(subs[i])
		lo += l
		hi = addMax(hi, h)
	}
	return best
}

// anchorSpec says where a regex's matches lie relative to occurrences of
// one of lits.
type anchorSpec struct {
	lits           []string
	fixed          bool // the match starts minPre..maxPre bytes before the literal
	minPre, maxPre int
	pre            side // window anchor: what may precede the literal
	post           side // what may follow it
}

// side bounds the text a sequence of regex elements can match: elements of
// bounded length match at most budget bytes in all, and the unbounded
// ones never match a byte in stop. So the text holds at most budget stop
// bytes, and a walk from the literal that counts stop bytes finds where a
// match must begin (or end). ok is false when no such bound exists.
type side struct {
	budget int
	stop   byteSet
	ok     bool
}

const maxSideBudget = 1024

func sideOf(subs []*syntax.Regexp) side {
	var s side
	for i := range s.stop {
		s.stop[i] = ^uint64(0)
	}
	s.stop[2], s.stop[3] = 0, 0 // only ASCII bytes are counted
	var bounded []*syntax.Regexp
	for _, sub := range subs {
		if !collectSide(sub, &bounded, &s.stop) {
			return side{}
		}
	}
	// Only bounded elements that can match a stop byte spend budget.
	for _, b := range bounded {
		can := bytesOf(b)
		if can[0]&s.stop[0] != 0 || can[1]&s.stop[1] != 0 {
			_, hi := byteLen(b)
			s.budget += hi
		}
	}
	if s.budget > maxSideBudget || s.stop == (byteSet{}) {
		return side{}
	}
	s.ok = true
	return s
}

// collectSide sorts re's parts into bounded elements and unbounded
// repeats, whose bytes are removed from stop. Branches of an alternation
// all add their bounded parts: more budget than needed, never less.
func collectSide(re *syntax.Regexp, bounded *[]*syntax.Regexp, stop *byteSet) bool {
	if _, hi := byteLen(re); hi >= 0 {
		*bounded = append(*bounded, re)
		return true
	}
	switch re.Op {
	case syntax.OpStar, syntax.OpPlus, syntax.OpRepeat:
		can := bytesOf(re.Sub[0])
		for i := range stop {
			stop[i] &^= can[i]
		}
		return true
	case syntax.OpCapture, syntax.OpQuest, syntax.OpConcat, syntax.OpAlternate:
		for _, sub := range re.Sub {
			if !collectSide(sub, bounded, stop) {
				return false
			}
		}
		return true
	}
	return false
}

// byteSet is a set of bytes.
type byteSet [4]uint64

func (b *byteSet) has(c byte) bool { return b[c>>6]&(1<<(c&63)) != 0 }
func (b *byteSet) add(c byte)      { b[c>>6] |= 1 << (c & 63) }

// bytesOf is every ASCII byte a match of re can contain (non-ASCII bytes
// are never stop bytes, so they are left out).
func bytesOf(re *syntax.Regexp) byteSet {
	var out byteSet
	addRune := func(r rune) {
		if r < utf8.RuneSelf {
			out.add(byte(r))
			if re.Flags&syntax.FoldCase != 0 {
				out.add(byte(unicode.ToUpper(r)))
				out.add(byte(unicode.ToLower(r)))
			}
		}
	}
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			addRune(r)
		}
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for r := re.Rune[i]; r <= re.Rune[i+1] && r < utf8.RuneSelf; r++ {
				out.add(byte(r))
			}
		}
	case syntax.OpAnyChar:
		out = byteSet{^uint64(0), ^uint64(0)}
	case syntax.OpAnyCharNotNL:
		out = byteSet{^uint64(0), ^uint64(0)}
		out[0] &^= 1 << '\n'
	default:
		for _, sub := range re.Sub {
			b := bytesOf(sub)
			for i := range out {
				out[i] |= b[i]
			}
		}
	}
	return out
}
