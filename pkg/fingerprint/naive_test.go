package fingerprint

// naiveAnalyze is the reference the engine must agree with and the
// baseline it is measured against: every regex of the right kind runs on
// every piece of evidence, with no prefilter. Resolution is shared.
func naiveAnalyze(e *Engine, ev *Evidence) []Detection {
	sc := e.pool.Get().(*scratch)
	defer e.pool.Put(sc)
	sc.nextPage()
	all := func(kind, string) bool { return true }
	forEachText(ev, all, func(k kind, key, text string) {
		for pid := range e.pats {
			p := &e.pats[pid]
			if p.kind != k || p.key != key {
				continue
			}
			e.evalSearch(sc, int32(pid), text, 0)
		}
	})
	return e.resolve(sc)
}
