package fingerprint

import (
	"cmp"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// Engine matches a DB against pages. It is immutable and safe for
// concurrent Analyze calls; per-call state comes from a pool.
type Engine struct {
	db    *DB
	techs []techInfo
	rules []ruleInfo
	pats  []enginePattern
	kinds [numKinds]kindIndex
	pool  sync.Pool
}

// enginePattern is a pattern with what the prefilter knows about it.
type enginePattern struct {
	*pattern
	rule     int32
	fullMask uint8 // one bit per clause; all set = every clause's literal seen
	// anchor literal ids (in the kind's automaton), nil when the regex has
	// no anchor, and where matches lie relative to them.
	anchor      []int32
	spec        anchorSpec
	looksBehind bool // an assertion may read the byte before the match

	once      sync.Once
	atStart   *regexp.Regexp // ^(?:re): a try at offset 0
	afterByte *regexp.Regexp // ^(?s:.)(?:re): a try after one byte of context
	afterAny  *regexp.Regexp // (?s:.)(?:re): a search with left context
}

// kindIndex holds one automaton over the literals of one kind's patterns.
type kindIndex struct {
	dfa      *acDFA
	postings [][]posting        // literal id -> patterns and clause bits it satisfies
	isAnchor []bool             // literal id -> record its occurrences
	always   map[string][]int32 // key -> patterns without usable literals
	keys     map[string]bool    // keys some pattern reads
}

type posting struct {
	pat int32
	bit uint8
}

// maxStarts bounds anchored tries per pattern and text; past it one
// ordinary search from the first possible start is cheaper.
const maxStarts = 4096

// NewEngine builds the prefilter for db.
func NewEngine(db *DB) *Engine {
	e := &Engine{db: db}
	e.techs, e.rules = resolveInfo(db)
	type litKey struct {
		k kind
		s string
	}
	litIDs := map[litKey]int32{}
	var lits [numKinds][]string
	id := func(k kind, s string) int32 {
		if n, ok := litIDs[litKey{k, s}]; ok {
			return n
		}
		n := int32(len(lits[k]))
		litIDs[litKey{k, s}] = n
		lits[k] = append(lits[k], s)
		return n
	}
	for k := range e.kinds {
		e.kinds[k].always = map[string][]int32{}
		e.kinds[k].keys = map[string]bool{}
	}
	var post [numKinds]map[int32][]posting
	var anchors [numKinds]map[int32]bool
	for ri, r := range e.rules {
		for _, p := range r.patterns {
			pid := int32(len(e.pats))
			e.pats = append(e.pats, enginePattern{pattern: p, rule: int32(ri)})
			ep := &e.pats[pid]
			ki := &e.kinds[p.kind]
			ki.keys[p.key] = true
			a := analyze(p.source)
			ep.looksBehind = a.looksBehind
			if post[p.kind] == nil {
				post[p.kind], anchors[p.kind] = map[int32][]posting{}, map[int32]bool{}
			}
			for ci, clause := range a.clauses {
				for _, s := range clause {
					l := id(p.kind, s)
					post[p.kind][l] = append(post[p.kind][l], posting{pat: pid, bit: 1 << ci})
				}
				ep.fullMask |= 1 << ci
			}
			if len(a.clauses) == 0 {
				ki.always[p.key] = append(ki.always[p.key], pid)
			}
			if p.backtrack != nil {
				continue // evalBacktrack searches; no anchored tries
			}
			for _, s := range a.anchor.lits {
				l := id(p.kind, s)
				ep.anchor = append(ep.anchor, l)
				anchors[p.kind][l] = true
			}
			ep.spec = a.anchor
		}
	}
	maxLits := 0
	for k := range e.kinds {
		ki := &e.kinds[k]
		if len(lits[k]) == 0 {
			continue
		}
		ki.dfa = newACDFA(lits[k])
		ki.postings = make([][]posting, len(lits[k]))
		ki.isAnchor = make([]bool, len(lits[k]))
		for l, ps := range post[k] {
			ki.postings[l] = ps
		}
		for l := range anchors[k] {
			ki.isAnchor[l] = true
		}
		maxLits = max(maxLits, len(lits[k]))
	}
	npats, nrules := len(e.pats), len(e.rules)
	e.pool.New = func() any {
		return &scratch{
			litEpoch: make([]uint32, maxLits),
			first:    make([]int32, maxLits),
			last:     make([]int32, maxLits),
			patEpoch: make([]uint32, npats),
			patMask:  make([]uint8, npats),
			patPage:  make([]uint32, npats),
			rulePage: make([]uint32, nrules),
			ruleConf: make([]int, nrules),
		}
	}
	return e
}

// scratch is one Analyze call's working memory. Epochs avoid clearing:
// an entry is valid only when its epoch equals the current one.
type scratch struct {
	epoch    uint32 // per piece of text
	litEpoch []uint32
	first    []int32 // literal -> first occurrence (index in occ)
	last     []int32
	present  []int32 // literals seen in the current text
	occ      []occurrence
	patEpoch []uint32
	patMask  []uint8
	cands    []int32
	spans    []litSpan
	hits     []acHit    // the literals found in the current text
	parts    [3][]acHit // scratch for acDFA.scan
	fold     textFold   // maps offsets of hits (in the folded text) to the text's

	page      uint32 // per Analyze call
	patPage   []uint32
	rulePage  []uint32
	ruleConf  []int
	matched   []int32 // rules with a match on this page
	versions  []versionHit
	backtrack backtrackBudget
}

type occurrence struct {
	pos  int
	next int32
}

type versionHit struct {
	rule       int32
	version    string
	confidence int
}

// candMark flags a pattern already queued as a candidate for this text.
const candMark = 0x80

func (sc *scratch) nextEpoch() {
	sc.epoch++
	if sc.epoch == 0 { // wrapped: stale entries could look current
		clear(sc.litEpoch)
		clear(sc.patEpoch)
		sc.epoch = 1
	}
}

func (sc *scratch) nextPage() {
	sc.page++
	if sc.page == 0 {
		clear(sc.patPage)
		clear(sc.rulePage)
		sc.page = 1
	}
	sc.matched = sc.matched[:0]
	sc.versions = sc.versions[:0]
	sc.backtrack.reset()
}

// Analyze names the technologies ev shows, in a deterministic order.
func (e *Engine) Analyze(ev *Evidence) []Detection {
	sc := e.pool.Get().(*scratch)
	defer e.pool.Put(sc)
	sc.nextPage()
	forEachText(ev, e.wants, func(k kind, key, text string) { e.matchText(sc, k, key, text) })
	return e.resolve(sc)
}

// wants skips evidence no pattern looks at before any work is done on it.
func (e *Engine) wants(k kind, key string) bool {
	return e.kinds[k].keys[key]
}

// forEachText calls f for every piece of evidence of every kind, made
// valid UTF-8 so that RE2 and the prefilter agree on rune boundaries.
func forEachText(ev *Evidence, want func(kind, string) bool, f func(k kind, key, text string)) {
	one := func(k kind, key, text string) {
		if !want(k, key) {
			return
		}
		if !utf8.ValidString(text) {
			text = strings.ToValidUTF8(text, "\uFFFD")
		}
		f(k, key, text)
	}
	if ev.URL != "" {
		one(kindURL, "", ev.URL)
	}
	if ev.HTML != "" {
		one(kindHTML, "", ev.HTML)
	}
	if ev.Text != "" {
		one(kindText, "", ev.Text)
	}
	for _, s := range ev.CSS {
		one(kindCSS, "", s)
	}
	for _, s := range ev.ScriptSrc {
		one(kindScriptSrc, "", s)
	}
	for _, s := range ev.Scripts {
		one(kindScripts, "", s)
	}
	if ev.Robots != "" {
		one(kindRobots, "", ev.Robots)
	}
	if ev.CertIssuer != "" {
		one(kindCertIssuer, "", ev.CertIssuer)
	}
	for name, values := range ev.Headers {
		for _, v := range values {
			one(kindHeaders, strings.ToLower(name), v)
		}
	}
	for name, v := range ev.Cookies {
		one(kindCookies, strings.ToLower(name), v)
	}
	for name, values := range ev.Meta {
		for _, v := range values {
			one(kindMeta, strings.ToLower(name), v)
		}
	}
	for typ, values := range ev.DNS {
		for _, v := range values {
			one(kindDNS, strings.ToUpper(typ), v)
		}
	}
}

// matchText runs, on one piece of evidence, the patterns whose literals
// all occur in it, each only where its anchor occurs.
func (e *Engine) matchText(sc *scratch, k kind, key, text string) {
	ki := &e.kinds[k]
	sc.nextEpoch()
	sc.present, sc.occ = sc.present[:0], sc.occ[:0]
	if ki.dfa != nil {
		sc.hits = ki.dfa.scan(sc.fold.fold(text), sc.hits[:0], &sc.parts)
		for _, h := range sc.hits {
			l := h.id
			if sc.litEpoch[l] != sc.epoch {
				sc.litEpoch[l] = sc.epoch
				sc.first[l], sc.last[l] = -1, -1
				sc.present = append(sc.present, l)
			}
			if !ki.isAnchor[l] {
				continue
			}
			n := int32(len(sc.occ))
			sc.occ = append(sc.occ, occurrence{pos: h.start, next: -1})
			if sc.last[l] >= 0 {
				sc.occ[sc.last[l]].next = n
			} else {
				sc.first[l] = n
			}
			sc.last[l] = n
		}
	}
	sc.cands = append(sc.cands[:0], ki.always[key]...)
	for _, l := range sc.present {
		for _, po := range ki.postings[l] {
			if e.pats[po.pat].key != key {
				continue
			}
			if sc.patEpoch[po.pat] != sc.epoch {
				sc.patEpoch[po.pat], sc.patMask[po.pat] = sc.epoch, 0
			}
			m := sc.patMask[po.pat] | po.bit
			if m&^candMark == e.pats[po.pat].fullMask && m&candMark == 0 {
				m |= candMark
				sc.cands = append(sc.cands, po.pat)
			}
			sc.patMask[po.pat] = m
		}
	}
	for _, pid := range sc.cands {
		p := &e.pats[pid]
		if p.version == "" && sc.patPage[pid] == sc.page {
			continue // already counted on this page, and nothing more to learn
		}
		switch {
		case p.anchor == nil:
			e.evalSearch(sc, pid, text, 0)
		case p.spec.fixed:
			e.evalFixed(sc, pid, text)
		default:
			e.evalWindow(sc, pid, text)
		}

	}
}

// evalSearch runs the regex as is on text[from:]; from must be 0 when the
// regex looks behind its start.
func (e *Engine) evalSearch(sc *scratch, pid int32, text string, from int) {
	p := &e.pats[pid]
	if p.backtrack != nil {
		e.evalBacktrack(sc, pid, text)
		return
	}
	if p.version == "" {
		if p.re.MatchString(text[from:]) {
			e.record(sc, pid, "", nil)
		}
		return
	}
	if m := p.re.FindStringSubmatchIndex(text[from:]); m != nil {
		e.record(sc, pid, text[from:], m)
	}
}

// occurrences lists where pattern p's anchor literals occur in the
// current text, by increasing start (the longest literal for a start), as
// offsets in the folded text (see textFold).
func (sc *scratch) occurrences(p *enginePattern, lens []int) []litSpan {
	spans := sc.spans[:0]
	for _, l := range p.anchor {
		if sc.litEpoch[l] != sc.epoch {
			continue
		}
		for o := sc.first[l]; o >= 0; o = sc.occ[o].next {
			pos := sc.occ[o].pos
			spans = append(spans, litSpan{pos, pos + lens[l]})
		}
	}
	if len(p.anchor) > 1 {
		slices.SortFunc(spans, func(a, b litSpan) int { return cmp.Or(a.pos-b.pos, b.end-a.end) })
		spans = slices.CompactFunc(spans, func(a, b litSpan) bool { return a.pos == b.pos })
	}
	sc.spans = spans
	return spans
}

type litSpan struct{ pos, end int }

func (p *enginePattern) compileAnchored() {
	p.once.Do(func() {
		p.atStart = regexp.MustCompile(`(?i)^(?:` + p.source + `)`)
		p.afterByte = regexp.MustCompile(`(?i)^(?s:.)(?:` + p.source + `)`)
		p.afterAny = regexp.MustCompile(`(?i)(?s:.)(?:` + p.source + `)`)
	})
}

// matchAt runs the regex anchored at st, with the real byte before st as
// context, and returns submatch indices into text[from:] (nil: no match).
// st must be a rune boundary, so text[st-1] decodes as one byte.
func (p *enginePattern) matchAt(text string, st int, submatch bool) (from int, m []int, ok bool) {
	re := p.atStart
	if st > 0 {
		re, from = p.afterByte, st-1
	}
	if !submatch {
		return from, nil, re.MatchString(text[from:])
	}
	m = re.FindStringSubmatchIndex(text[from:])
	if m != nil && from < st {
		m[0]++ // the context byte is not part of the match
	}
	return from, m, m != nil
}

// evalFixed tries the regex anchored at each start its fixed anchor
// allows, in increasing order: the first success is the match a plain
// search would find, since no match can start anywhere else. A try reads
// no further than its occurrence's window; where occurrences crowd so that
// tries would read the same text again and again, their window is searched
// once instead.
func (e *Engine) evalFixed(sc *scratch, pid int32, text string) {
	p := &e.pats[pid]
	occ := sc.occurrences(p, e.kinds[p.kind].dfa.lens)
	if len(occ) == 0 {
		return
	}
	if len(occ)*(p.spec.maxPre-p.spec.minPre+1) > maxStarts {
		from := sc.fold.orig(max(occ[0].pos-p.spec.maxPre, 0))
		for from < len(text) && !utf8.RuneStart(text[from]) {
			from++
		}
		if p.looksBehind {
			from = 0
		}
		e.evalSearch(sc, pid, text, from)
		return
	}
	p.compileAnchored()
	ws := windows{spec: &p.spec, text: text, occ: occ, fold: &sc.fold}
	next := 0 // lowest start not yet tried, in the folded text as the offsets are
	for lo, hi, ok := ws.next(); ok; lo, hi, ok = ws.next() {
		group := occ[ws.first:ws.i]
		if ws.reach > crowded*(hi-lo) {
			if best := p.searchWindow(text, lo, hi); best >= 0 {
				e.confirm(sc, pid, text, best, lo)
				return
			}
			next = max(next, group[len(group)-1].pos-p.spec.minPre+1)
			continue
		}
		for _, o := range group {
			q := o.pos
			for st := max(q-p.spec.maxPre, next); st <= q-p.spec.minPre; st++ {
				at := sc.fold.orig(st)
				if at < len(text) && at > 0 && !utf8.RuneStart(text[at]) {
					continue // not a rune boundary: no match starts here
				}
				if from, m, ok := p.matchAt(text, at, p.version != ""); ok {
					e.record(sc, pid, text[from:], m)
					return
				}
			}
			next = max(next, q-p.spec.minPre+1)
		}
	}
}

// crowded: a window whose occurrences' own windows add up to more than
// this many times its size is searched once rather than tried start by
// start.
const crowded = 4

// evalWindow searches, around the occurrences of the anchor, only the
// windows their side bounds allow: the first window holding a match gives
// the leftmost start (windows are disjoint and in order).
func (e *Engine) evalWindow(sc *scratch, pid int32, text string) {
	p := &e.pats[pid]
	occ := sc.occurrences(p, e.kinds[p.kind].dfa.lens)
	if len(occ) == 0 {
		return
	}
	p.compileAnchored()
	ws := windows{spec: &p.spec, text: text, occ: occ, fold: &sc.fold}
	for lo, hi, ok := ws.next(); ok; lo, hi, ok = ws.next() {
		if best := p.searchWindow(text, lo, hi); best >= 0 {
			e.confirm(sc, pid, text, best, lo)
			return
		}
	}
}

// confirm runs the regex anchored at best, the leftmost start a search of
// the window from lo found, on the whole text for the exact match. If that
// fails (the window's cut end made a false match), it searches plainly from
// lo: no match starts before the window.
func (e *Engine) confirm(sc *scratch, pid int32, text string, best, lo int) {
	p := &e.pats[pid]
	if from, m, ok := p.matchAt(text, best, p.version != ""); ok {
		e.record(sc, pid, text[from:], m)
		return
	}
	if p.looksBehind {
		lo = 0
	}
	e.evalSearch(sc, pid, text, lo)
}

// windows yields, in order, the disjoint parts of a text where matches
// around a pattern's anchor occurrences can lie: occurrences whose windows
// overlap share one. Each byte is walked at most a few times in all, so a
// page full of occurrences (thousands, with no stop byte between them)
// costs one pass, not one per occurrence.
type windows struct {
	spec *anchorSpec
	text string
	occ  []litSpan // in the folded text, by increasing start
	fold *textFold
	// After next: the window's occurrences are occ[first:i], and (for a
	// fixed anchor) reach is the sum of their own windows' sizes.
	first, i, reach int
	// The walk forward: text[end:hi] holds n stop bytes of spec.post, and
	// hi is where the next would be one too many (or the end of text).
	end, hi, n int
}

// next returns the next window [lo, hi), or ok false when none is left.
func (w *windows) next() (lo, hi int, ok bool) {
	if w.i == len(w.occ) {
		return 0, 0, false
	}
	w.first = w.i
	lo = w.start(w.occ[w.i], 0)
	hi = w.forward(w.fold.orig(w.occ[w.i].end))
	w.reach = hi - lo
	for w.i++; w.i < len(w.occ); w.i++ {
		o := w.occ[w.i]
		l := w.start(o, hi)
		if l > hi {
			break // apart from this window
		}
		h := w.forward(w.fold.orig(o.end))
		w.reach += h - l
		hi = max(hi, h)
	}
	return lo, hi, true
}

// start returns the lowest offset a match around occurrence o can start
// at. A window anchor's walk back stops at floor, and returns floor if the
// start can be there or lower.
func (w *windows) start(o litSpan, floor int) int {
	if w.spec.fixed {
		return w.fold.orig(max(o.pos-w.spec.maxPre, 0))
	}
	return w.spec.pre.walkBack(w.text, w.fold.orig(o.pos), floor)
}

// forward returns the highest offset a match can end at when the literal
// ends at end (or at the last end asked, if that is further: a larger
// window only costs time). Ends come in nearly increasing order, so the
// walk resumes where it stopped instead of starting over.
func (w *windows) forward(end int) int {
	post := &w.spec.post
	if !post.ok {
		return len(w.text)
	}
	end = max(end, w.end)
	if end > w.hi {
		w.end, w.hi, w.n = end, end, 0
	}
	for ; w.end < end; w.end++ {
		if post.stop.has(w.text[w.end]) {
			w.n--
		}
	}
	for ; w.hi < len(w.text); w.hi++ {
		if post.stop.has(w.text[w.hi]) {
			if w.n == post.budget {
				break
			}
			w.n++
		}
	}
	return w.hi
}

// searchWindow returns the leftmost start >= lo of a match inside
// text[:hi] and one rune of right context (for $ and \b), judged with the
// real byte before lo, or -1.
func (p *enginePattern) searchWindow(text string, lo, hi int) int {
	if hi < len(text) {
		_, w := utf8.DecodeRuneInString(text[hi:])
		hi += w
	}
	if lo == 0 {
		if loc := p.re.FindStringIndex(text[:hi]); loc != nil {
			return loc[0]
		}
		return -1
	}
	from := lo - 1
	for from > 0 && !utf8.RuneStart(text[from]) {
		from--
	}
	loc := p.afterAny.FindStringIndex(text[from:hi])
	if loc == nil {
		return -1
	}
	_, w := utf8.DecodeRuneInString(text[from+loc[0]:])
	return from + loc[0] + w
}

// walkBack returns the lowest offset a match can start at when the
// literal is at q: before it lie at most budget stop bytes. It walks no
// lower than floor, and returns floor if the start can be there or lower.
func (s *side) walkBack(text string, q, floor int) int {
	n := 0
	for i := q - 1; i >= floor; i-- {
		if s.stop.has(text[i]) {
			if n++; n > s.budget {
				return i + 1
			}
		}
	}
	return floor
}

// record notes a match of pattern pid; m are submatch indices into text.
func (e *Engine) record(sc *scratch, pid int32, text string, m []int) {
	p := &e.pats[pid]
	if sc.patPage[pid] != sc.page {
		sc.patPage[pid] = sc.page
		if sc.rulePage[p.rule] != sc.page {
			sc.rulePage[p.rule], sc.ruleConf[p.rule] = sc.page, 0
			sc.matched = append(sc.matched, p.rule)
		}
		sc.ruleConf[p.rule] = min(100, sc.ruleConf[p.rule]+p.confidence)
	}
	if v := p.versionOf(text, m); v != "" {
		sc.versions = append(sc.versions, versionHit{rule: p.rule, version: v, confidence: p.confidence})
	}
}
