package fingerprint

import (
	"cmp"
	"math"
	"slices"
	"strings"
)

// techInfo is a technology with its references resolved to indices.
type techInfo struct {
	t           *Technology
	implies     []impliedRef
	excludes    []int32
	requires    []int32
	requiresCat []int
	cats        []int
	rank        int // position in the output order
}

type impliedRef struct {
	tech       int32
	confidence int
	version    string
}

// resolveInfo indexes db's technologies (in db order) and ranks them for
// output: most important category first (lowest priority number), then name.
func resolveInfo(db *DB) []techInfo {
	index := make(map[string]int32, len(db.techs))
	for i, t := range db.techs {
		index[t.Name] = int32(i)
	}
	names := func(list []string) []int32 {
		var out []int32
		for _, n := range list {
			if i, ok := index[n]; ok {
				out = append(out, i)
			}
		}
		return out
	}
	info := make([]techInfo, len(db.techs))
	prio := make([]int, len(db.techs))
	order := make([]int, len(db.techs))
	for i, t := range db.techs {
		ti := techInfo{t: t, excludes: names(t.excludes), requires: names(t.requires),
			requiresCat: t.requiresCategory, cats: t.categoryIDs}
		for _, im := range t.implies {
			if j, ok := index[im.name]; ok {
				ti.implies = append(ti.implies, impliedRef{tech: j, confidence: im.confidence, version: im.version})
			}
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
	return info
}

// resolve turns the matches of one page into detections: it follows
// implies (an implied technology gets the lower of its implier's and the
// implication's confidence), admits technologies whose requires or
// requiresCategory are met, drops what a detected technology excludes,
// and picks each version.
func (e *Engine) resolve(sc *scratch) []Detection {
	if len(sc.detected) == 0 {
		return nil
	}
	direct := make(map[int32]int, len(sc.detected))
	for _, t := range sc.detected {
		direct[t] = sc.techConf[t]
	}
	conf := e.closure(direct, nil)
	blocked := map[int32]bool{}
	for t := range conf {
		for _, x := range e.techs[t].excludes {
			if _, ok := conf[x]; ok {
				blocked[x] = true
			}
		}
	}
	if len(blocked) > 0 {
		conf = e.closure(direct, blocked)
	}

	versions := map[int32][]versionHit{}
	for _, v := range sc.versions {
		if _, ok := conf[v.tech]; ok {
			versions[v.tech] = append(versions[v.tech], v)
		}
	}
	for t, c := range conf {
		for _, im := range e.techs[t].implies {
			if _, ok := conf[im.tech]; ok && im.version != "" {
				versions[im.tech] = append(versions[im.tech], versionHit{tech: im.tech, version: im.version, confidence: min(c, im.confidence)})
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

// closure computes the detected set and confidences: direct matches of
// technologies without requirements, their implications (transitively), and
// repeatedly technologies whose requirement the set now meets. blocked
// technologies are never admitted. Confidence only rises and is capped, so
// the loop ends.
func (e *Engine) closure(direct map[int32]int, blocked map[int32]bool) map[int32]int {
	conf := make(map[int32]int, len(direct)*2)
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
	var gated []int32
	for _, t := range sortedTechs(direct) {
		if ti := &e.techs[t]; len(ti.requires) > 0 || len(ti.requiresCat) > 0 {
			gated = append(gated, t)
			continue
		}
		raise(t, direct[t])
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
		for _, g := range gated {
			if _, ok := conf[g]; !ok && !blocked[g] && e.requirementMet(g, conf) {
				raise(g, direct[g])
				admitted = true
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
func (e *Engine) requirementMet(t int32, conf map[int32]int) bool {
	ti := &e.techs[t]
	for _, r := range ti.requires {
		if _, ok := conf[r]; ok {
			return true
		}
	}
	if len(ti.requiresCat) == 0 {
		return false
	}
	for d := range conf {
		for _, c := range e.techs[d].cats {
			if slices.Contains(ti.requiresCat, c) {
				return true
			}
		}
	}
	return false
}

func sortedTechs(m map[int32]int) []int32 {
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
