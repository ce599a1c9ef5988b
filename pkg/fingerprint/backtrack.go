package fingerprint

import (
	"regexp"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
)

// Patterns RE2 refuses (look-ahead, look-behind, back-references; 18 of
// the community database's) run on regexp2, a backtracking engine. Its
// time can grow exponentially with its input, so it is fenced in:
//
//   - it runs only where the pattern can match: the literal prefilter
//     must pass (on the pattern without its look-arounds, see
//     withoutLookaround), and that RE2 stand-in must match;
//   - it reads a bounded input: a short text whole, a long one only around
//     the stand-in's matches;
//   - each run stops after backtrackMatchTimeout, and one Analyze call
//     stops running such patterns once it has spent backtrackPageBudget.
//
// Other patterns pay nothing for this. The limits are wall-clock time (all
// regexp2 offers), so they are set far above what a legitimate run takes
// (microseconds on a bounded input): a run descheduled on a busy machine
// must not be taken for a runaway one.
const (
	backtrackMatchTimeout = 20 * time.Millisecond
	backtrackPageBudget   = 60 * time.Millisecond
	// backtrackMaxInput bounds the bytes regexp2 reads per pattern and
	// text; a text up to this size is read whole, so matched exactly.
	backtrackMaxInput = 32 << 10
	// backtrackContext is the text kept on each side of a stand-in match
	// in a long text: look-arounds reading further than that, or ^ and $
	// inside an alternation, see the window's edge as the text's.
	backtrackContext    = 256
	backtrackMaxWindows = 32
	// backtrackClockPeriod is how often regexp2's clock ticks while
	// timeouts are in use; its default, 100 ms, would let a 20 ms timeout
	// run for over 200 ms.
	backtrackClockPeriod = 2 * time.Millisecond
)

var backtrackClock sync.Once

// compileBacktrack compiles a regex for regexp2 with RE2's classes and
// case folding, and the match timeout.
func compileBacktrack(src string) (*regexp2.Regexp, error) {
	re, err := regexp2.Compile(src, regexp2.RE2|regexp2.IgnoreCase)
	if err != nil {
		return nil, err
	}
	re.MatchTimeout = backtrackMatchTimeout
	backtrackClock.Do(func() { regexp2.SetTimeoutCheckPeriod(backtrackClockPeriod) })
	return re, nil
}

// backtrackBudget is what one Analyze call may still spend in regexp2,
// with buffers reused from one run to the next.
type backtrackBudget struct {
	left  time.Duration
	runes []rune
	offs  []int // byte offset in the text of each rune, and of the end
}

func (b *backtrackBudget) reset() { b.left = backtrackPageBudget }

// evalBacktrack runs a pattern RE2 refuses on text, within the bounds
// above. A run that times out counts as no match.
func (e *Engine) evalBacktrack(sc *scratch, pid int32, text string) {
	p := &e.pats[pid]
	b := &sc.backtrack
	for _, w := range backtrackWindows(p.re, text) {
		if b.left <= 0 {
			return
		}
		start := time.Now()
		m, err := b.find(p.backtrack, text, w)
		if err != nil && time.Since(start) < backtrackMatchTimeout/2 {
			// regexp2 reads a clock that a goroutine advances; on a busy
			// machine it lags, and a deadline taken from it can pass at
			// once. A run ended well before its time gets a second one.
			m, _ = b.find(p.backtrack, text, w)
		}
		b.left -= time.Since(start)
		if m != nil {
			e.record(sc, pid, text, m)
			return
		}
	}
}

// backtrackWindows lists the parts of text regexp2 reads for a pattern
// whose RE2 stand-in is re (nil when it has none): the whole text when it
// is short, else windows around re's first matches, merged, at most
// backtrackMaxInput bytes in all. No window means no match is possible.
func backtrackWindows(re *regexp.Regexp, text string) []litSpan {
	if re == nil {
		return []litSpan{{0, runeFloor(text, min(len(text), backtrackMaxInput))}}
	}
	if len(text) <= backtrackMaxInput {
		if !re.MatchString(text) {
			return nil
		}
		return []litSpan{{0, len(text)}}
	}
	var out []litSpan
	total := 0
	for _, loc := range re.FindAllStringIndex(text, backtrackMaxWindows) {
		lo := runeFloor(text, max(0, loc[0]-backtrackContext))
		hi := runeFloor(text, min(len(text), loc[1]+backtrackContext))
		if n := len(out); n > 0 && lo <= out[n-1].end {
			prev := out[n-1]
			total -= prev.end - prev.pos
			lo, hi = prev.pos, max(hi, prev.end)
			out = out[:n-1]
		}
		hi = runeFloor(text, min(hi, lo+backtrackMaxInput-total))
		if hi <= lo {
			break
		}
		out = append(out, litSpan{lo, hi})
		total += hi - lo
	}
	return out
}

// runeFloor moves i back to the start of the rune it falls in.
func runeFloor(text string, i int) int {
	for i > 0 && i < len(text) && !utf8.RuneStart(text[i]) {
		i--
	}
	return i
}

// find runs re on text[w.pos:w.end] and returns its submatch indices as
// byte offsets in text, nil when it does not match; err when it runs out
// of time.
func (b *backtrackBudget) find(re *regexp2.Regexp, text string, w litSpan) ([]int, error) {
	b.runes, b.offs = b.runes[:0], b.offs[:0]
	for i, r := range text[w.pos:w.end] {
		b.runes = append(b.runes, r)
		b.offs = append(b.offs, w.pos+i)
	}
	b.offs = append(b.offs, w.end)
	m, err := re.FindRunesMatch(b.runes)
	if err != nil || m == nil {
		return nil, err
	}
	groups := len(re.GetGroupNumbers())
	out := make([]int, 2*groups)
	for i := range groups {
		out[2*i], out[2*i+1] = -1, -1
		if g := m.GroupByNumber(i); g != nil && len(g.Captures) > 0 {
			out[2*i], out[2*i+1] = b.offs[g.Index], b.offs[g.Index+g.Length]
		}
	}
	return out, nil
}
