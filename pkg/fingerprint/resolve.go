package fingerprint

import (
	"cmp"
	"math"
	"slices"
	"strings"
)

// techInfo is a technology with its references resolved to indices.
type techInfo struct {
	t        *Technology
	implies  []impliedRef
	excludes []int32
	cats     []int
	rank     int // position in the output order
}

// ruleInfo is one rule of a technology (see rule), the unit the engine
// records matches for: a rule's requirement gates its own matches.
type ruleInfo struct {
	*rule
	tech        int32
	requires    []int32
	requiresCat []int
}

func (r *ruleInfo) gated() bool { return len(r.requires) > 0 || len(r.requiresCat) > 0 }

type impliedRef struct {
	tech       int32
	confidence int
	version    string
}

// resolveInfo indexes db's technologies (in db order) and their rules, and
// ranks the technologies for output: most important category first (lowest
// priority number), then name. References are by key, so "FastSpring"
// finds the technology named "Fastspring".
func resolveInfo(db *DB) ([]techInfo, []ruleInfo) {
	index := make(map[string]int32, len(db.techs))
	for i, t := range db.techs {
		index[key(t.Name)] = int32(i)
	}
	names := func(list []string) []int32 {
		var out []int32
		for _, n := range list {
			if i, ok := index[key(n)]; ok {
				out = append(out, i)
			}
		}
		return out
	}
	info := make([]techInfo, len(db.techs))
	var rules []ruleInfo
	prio := make([]int, len(db.techs))
	order := make([]int, len(db.techs))
	for i, t := range db.techs {
		ti := techInfo{t: t, excludes: names(t.excludes), cats: t.categoryIDs}
		for _, im := range t.implies {
			if j, ok := index[key(im.name)]; ok {
				ti.implies = append(ti.implies, impliedRef{tech: j, confidence: im.confidence, version: im.version})
			}
		}
		for _, r := range t.rules {
			ri := ruleInfo{rule: r, tech: int32(i), requires: names(r.requires), requiresCat: r.requiresCategory}
			if len(r.requires) > 0 && len(ri.requires) == 0 && len(ri.requiresCat) == 0 {
				continue // requires only technologies the database lacks: never met
			}
			rules = append(rules, ri)
		}
		info[i] = ti
		prio[i] = math.MaxInt
		for _, id := range t.categoryIDs {
			if c, ok := db.categories[id]; ok {
				prio[i] = min(prio[i], c.Priority)
			}
		}
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(prio[a], prio[b]) })
	for rank, i := range order {
		info[i].rank = rank
	}
	return info, rules
}

// resolve turns the matches of one page into detections: it follows
// implies (an implied technology gets the lower of its implier's and the
// implication's confidence), admits the matches of rules whose requires or
// requiresCategory are met, drops what a detected technology excludes,
// and picks each version.
func (e *Engine) resolve(sc *scratch) []Detection {
	if len(sc.matched) == 0 {
		return nil
	}
	matched := make(map[int32]int, len(sc.matched))
	for _, r := range sc.matched {
		matched[r] = sc.ruleConf[r]
	}
	conf := e.closure(matched, nil)
	blocked := map[int32]bool{}
	for t := range conf {
		for _, x := range e.techs[t].excludes {
			if _, ok := conf[x]; ok {
				blocked[x] = true
			}
		}
	}
	if len(blocked) > 0 {
		conf = e.closure(matched, blocked)
	}

	versions := map[int32][]versionHit{}
	for _, v := range sc.versions {
		t := e.rules[v.rule].tech
		if _, ok := conf[t]; ok {
			versions[t] = append(versions[t], v)
		}
	}
	for t, c := range conf {
		for _, im := range e.techs[t].implies {
			if _, ok := conf[im.tech]; ok && im.version != "" {
				versions[im.tech] = append(versions[im.tech], versionHit{version: im.version, confidence: min(c, im.confidence)})
			}
		}
	}

	type ranked struct {
		rank int
		d    Detection
	}
	list := make([]ranked, 0, len(conf))
	for t, c := range conf {
		tech := e.techs[t].t
		list = append(list, ranked{e.techs[t].rank, Detection{Name: tech.Name, Slug: tech.Slug,
			Version: chooseVersion(versions[t]), Categories: slices.Clone(tech.Categories),
			Confidence: c, Website: tech.Website}})
	}
	slices.SortFunc(list, func(a, b ranked) int { return a.rank - b.rank })
	out := make([]Detection, len(list))
	for i, r := range list {
		out[i] = r.d
	}
	return out
}

// closure computes the detected technologies and their confidences from
// the matched rules: a technology's direct confidence is the sum of its
// admitted rules' (at most 100); rules without a requirement are admitted
// at once, their technologies' implications followed transitively, and
// then, repeatedly, rules whose requirement the set now meets. blocked
// technologies are never admitted. Confidence only rises and is capped,
// so the loop ends.
func (e *Engine) closure(matched map[int32]int, blocked map[int32]bool) map[int32]int {
	conf := make(map[int32]int, len(matched)*2)
	direct := make(map[int32]int, len(matched))
	var work []int32
	raise := func(t int32, c int) {
		if blocked[t] {
			return
		}
		if old, ok := conf[t]; ok && old >= c {
			return
		}
		conf[t] = c
		work = append(work, t)
	}
	admit := func(r int32) {
		t := e.rules[r].tech
		direct[t] = min(100, direct[t]+matched[r])
		raise(t, direct[t])
	}
	var gated []int32
	for _, r := range sortedKeys(matched) {
		if e.rules[r].gated() {
			gated = append(gated, r)
			continue
		}
		admit(r)
	}
	for {
		for len(work) > 0 {
			t := work[len(work)-1]
			work = work[:len(work)-1]
			for _, im := range e.techs[t].implies {
				raise(im.tech, min(conf[t], im.confidence))
			}
		}
		admitted := false
		for i, g := range gated {
			if g >= 0 && !blocked[e.rules[g].tech] && e.requirementMet(g, conf) {
				admit(g)
				gated[i], admitted = -1, true
			}
		}
		if !admitted {
			return conf
		}
	}
}

// requirementMet: any required technology, or any technology of a
// required category, is in the set (Wappalyzer runs a technology with
// requires once any of them is found).
func (e *Engine) requirementMet(r int32, conf map[int32]int) bool {
	ri := &e.rules[r]
	for _, t := range ri.requires {
		if _, ok := conf[t]; ok {
			return true
		}
	}
	if len(ri.requiresCat) == 0 {
		return false
	}
	for d := range conf {
		for _, c := range e.techs[d].cats {
			if slices.Contains(ri.requiresCat, c) {
				return true
			}
		}
	}
	return false
}

func sortedKeys(m map[int32]int) []int32 {
	out := make([]int32, 0, len(m))
	for t := range m {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

// chooseVersion picks the best-supported version, then refines it with the
// most specific version that extends it ("8.1" -> "8.1.27"), so a precise
// version from weaker evidence is kept when it agrees.
func chooseVersion(hits []versionHit) string {
	if len(hits) == 0 {
		return ""
	}
	best := slices.MinFunc(hits, func(a, b versionHit) int {
		return cmp.Or(
			cmp.Compare(b.confidence, a.confidence),
			cmp.Compare(specificity(b.version), specificity(a.version)),
			cmp.Compare(len(b.version), len(a.version)),
			strings.Compare(a.version, b.version),
		)
	}).version
	for {
		var next []versionHit
		for _, h := range hits {
			if extends(h.version, best) {
				next = append(next, h)
			}
		}
		if len(next) == 0 {
			return best
		}
		best = slices.MinFunc(next, func(a, b versionHit) int {
			return cmp.Or(
				cmp.Compare(specificity(b.version), specificity(a.version)),
				cmp.Compare(b.confidence, a.confidence),
				cmp.Compare(len(b.version), len(a.version)),
				strings.Compare(a.version, b.version),
			)
		}).version
	}
}

// extends reports whether v is base followed by more version parts.
func extends(v, base string) bool {
	return len(v) > len(base) && strings.HasPrefix(v, base) && strings.IndexByte(".-+_ ", v[len(base)]) >= 0
}

// specificity counts the parts of a version: "1.25.3" has 3.
func specificity(v string) int {
	return 1 + strings.Count(v, ".")
}
