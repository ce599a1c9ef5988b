package fingerprint

import (
	"cmp"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
)

//go:embed data
var builtinFS embed.FS

// Category is a Wappalyzer category. A lower Priority is more important.
type Category struct {
	ID       int    `json:"id"`
	Name     string `json:"name"`
	Priority int    `json:"priority"`
}

// DB is a set of technologies and categories, immutable once built, so an
// Engine and any number of readers can share it.
type DB struct {
	techs      []*Technology // sorted by name
	byKey      map[string]*Technology
	categories map[int]Category
	report     LoadReport
}

// key identifies a technology across files and layers: its slug, so names
// that differ only in case or punctuation are one technology, or its name
// when that has no letter or digit to make a slug of. A slug has no ':',
// so the two kinds of key never meet.
func key(name string) string {
	if s := Slug(name); s != "" {
		return s
	}
	return "name:" + name
}

var builtin struct {
	once sync.Once
	db   *DB
	err  error
}

// Builtin returns the embedded database, parsed on first use.
func Builtin() (*DB, error) {
	builtin.once.Do(func() {
		builtin.db, builtin.err = loadFS(builtinFS, "data")
	})
	return builtin.db, builtin.err
}

// LoadDir reads every *.json below dir (FINGERPRINTS_DIR): files named
// categories.json hold categories, the rest technologies. A technology
// defined more than once (in two files, or under names of one slug) is
// merged into its first definition, in the order of file paths and then of
// each file, with a problem that says so. Patterns that cannot be
// used are listed in the report, not returned as errors.
func LoadDir(dir string) (*DB, error) {
	db, err := loadFS(os.DirFS(dir), ".")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return db, nil
}

func loadFS(fsys fs.FS, root string) (*DB, error) {
	var files []string
	err := fs.WalkDir(fsys, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".json") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(files)
	cats := map[int]Category{}
	var techs []*Technology
	origin := map[*Technology]string{} // the file defining each technology
	for _, f := range files {
		data, err := fs.ReadFile(fsys, f)
		if err != nil {
			return nil, err
		}
		if path.Base(f) == "categories.json" {
			c, err := parseCategories(data)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			maps.Copy(cats, c)
			continue
		}
		list, err := parseTechnologies(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		for _, t := range list {
			origin[t] = f
		}
		techs = append(techs, list...)
	}
	techs = fold(techs, func(kept, again *Technology) Problem {
		return Problem{Technology: kept.Name, Field: "name", Pattern: again.Name,
			Reason: fmt.Sprintf("also defined in %s, under a name with the same slug %q; merged into this definition (from %s)",
				origin[again], kept.Slug, origin[kept])}
	})
	return build(cats, techs), nil
}

func parseCategories(data []byte) (map[int]Category, error) {
	var raw map[string]struct {
		Name     string `json:"name"`
		Priority int    `json:"priority"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, err
	}
	out := make(map[int]Category, len(raw))
	for k, v := range raw {
		id, err := strconv.Atoi(k)
		if err != nil {
			return nil, fmt.Errorf("category id %q is not an integer", k)
		}
		out[id] = Category{ID: id, Name: v.Name, Priority: v.Priority}
	}
	return out, nil
}

// NewDB makes a database of technologies from ParseTechnologies, for
// example the custom fingerprints of the /technologies area. A later
// technology replaces an earlier one of the same slug. Category names are
// bound when the DB is merged with one that has categories.
func NewDB(techs ...*Technology) *DB {
	return Merge(build(nil, techs))
}

// Merge layers databases that replace: a later layer's technology
// replaces an earlier one of the same slug, as a custom fingerprint
// replaces a built-in one. Later categories replace earlier ones of the
// same id.
func Merge(layers ...*DB) *DB {
	cats, order := flatten(layers)
	last := map[string]int{}
	for i, t := range order {
		last[key(t.Name)] = i
	}
	var techs []*Technology
	for i, t := range order {
		if last[key(t.Name)] == i {
			techs = append(techs, t)
		}
	}
	return build(cats, techs)
}

// Combine layers databases that add to each other, as FINGERPRINTS_DIR adds
// to the built-in database: a technology several layers define is one
// technology, named as its first layer names it, found by the patterns of
// every layer (each definition's requires still gating its own), with the
// categories, implies and excludes of all. Later categories replace
// earlier ones of the same id.
func Combine(layers ...*DB) *DB {
	cats, order := flatten(layers)
	return build(cats, fold(order, nil))
}

func flatten(layers []*DB) (map[int]Category, []*Technology) {
	cats := map[int]Category{}
	var order []*Technology
	for _, l := range layers {
		if l == nil {
			continue
		}
		maps.Copy(cats, l.categories)
		order = append(order, l.techs...)
	}
	return cats, order
}

// fold merges each technology into the first of the same key, keeping the
// order of first definitions. note, when set, describes each merge as a
// problem of the merged technology.
func fold(order []*Technology, note func(kept, again *Technology) Problem) []*Technology {
	at := make(map[string]int, len(order))
	out := make([]*Technology, 0, len(order))
	for _, t := range order {
		k := key(t.Name)
		i, seen := at[k]
		if !seen {
			at[k] = len(out)
			out = append(out, t)
			continue
		}
		m := merged(out[i], t)
		if note != nil {
			m.problems = append(m.problems, note(out[i], t))
		}
		out[i] = m
	}
	return out
}

// merged returns a new technology holding the definitions of t and then u:
// t's name and descriptions (u's where t has none), the categories,
// implies, excludes and problems of both, and u's rules folded into t's: a
// rule with the same requirement takes the other's patterns, without
// duplicates, and a rule with another requirement stays its own. Neither t
// nor u changes; other databases may hold them.
func merged(t, u *Technology) *Technology {
	m := *t
	m.Website = cmp.Or(t.Website, u.Website)
	m.Description = cmp.Or(t.Description, u.Description)
	m.Icon = cmp.Or(t.Icon, u.Icon)
	m.CPE = cmp.Or(t.CPE, u.CPE)
	m.categoryIDs = appendNew(t.categoryIDs, u.categoryIDs)
	m.implies = appendNew(t.implies, u.implies)
	m.excludes = appendNew(t.excludes, u.excludes)
	m.problems = slices.Concat(t.problems, u.problems)
	m.deferred = deferredCounts{js: t.deferred.js + u.deferred.js, xhr: t.deferred.xhr + u.deferred.xhr,
		dom: t.deferred.dom + u.deferred.dom, domProperties: t.deferred.domProperties + u.deferred.domProperties}
	m.rules = slices.Clone(t.rules)
	for _, r := range u.rules {
		if i := slices.IndexFunc(m.rules, r.sameRequirement); i >= 0 {
			m.rules[i] = m.rules[i].with(r.patterns)
		} else {
			m.rules = append(m.rules, r)
		}
	}
	return &m
}

// appendNew is a followed by the elements of b that a lacks.
func appendNew[T comparable](a, b []T) []T {
	out := slices.Clone(a)
	for _, x := range b {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

// sameRequirement: both rules are gated by the same technologies (by key)
// and categories.
func (r *rule) sameRequirement(q *rule) bool {
	keys := func(names []string) []string {
		out := make([]string, len(names))
		for i, n := range names {
			out[i] = key(n)
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	sorted := func(ids []int) []int { return slices.Compact(slices.Sorted(slices.Values(ids))) }
	return slices.Equal(keys(r.requires), keys(q.requires)) &&
		slices.Equal(sorted(r.requiresCategory), sorted(q.requiresCategory))
}

// with returns a new rule: r with the patterns it does not already hold.
func (r *rule) with(patterns []*pattern) *rule {
	out := &rule{patterns: slices.Clone(r.patterns), requires: r.requires, requiresCategory: r.requiresCategory}
	for _, p := range patterns {
		if !slices.ContainsFunc(out.patterns, p.same) {
			out.patterns = append(out.patterns, p)
		}
	}
	return out
}

// build binds category names and computes the report. Technologies are
// copied so that binding never changes another DB's view.
func build(cats map[int]Category, techs []*Technology) *DB {
	db := &DB{
		byKey:      make(map[string]*Technology, len(techs)),
		categories: cats,
	}
	for _, t := range techs {
		c := *t
		c.Categories = nil
		for _, id := range t.categoryIDs {
			if cat, ok := cats[id]; ok {
				c.Categories = append(c.Categories, cat.Name)
			}
		}
		db.techs = append(db.techs, &c)
		db.byKey[key(c.Name)] = &c
	}
	slices.SortFunc(db.techs, func(a, b *Technology) int { return strings.Compare(a.Name, b.Name) })
	db.report = db.computeReport()
	return db
}

func (db *DB) computeReport() LoadReport {
	r := LoadReport{Technologies: len(db.techs), Categories: len(db.categories), Patterns: map[string]int{}}
	for _, t := range db.techs {
		r.Problems = append(r.Problems, t.problems...)
		ref := func(field, name string) {
			if _, ok := db.byKey[key(name)]; !ok {
				r.Problems = append(r.Problems, Problem{Technology: t.Name, Field: field, Pattern: name, Reason: "no such technology"})
			}
		}
		cat := func(field string, ids []int) {
			if len(db.categories) == 0 {
				return // a layer without categories binds them when merged
			}
			for _, id := range ids {
				if _, ok := db.categories[id]; !ok {
					r.Problems = append(r.Problems, Problem{Technology: t.Name, Field: field, Pattern: strconv.Itoa(id), Reason: "no such category"})
				}
			}
		}
		cat("cats", t.categoryIDs)
		for _, ru := range t.rules {
			for _, p := range ru.patterns {
				r.Patterns[kindNames[p.kind]]++
				r.Evaluated++
				if p.backtrack != nil {
					r.Backtracking++
				}
			}
			for _, n := range ru.requires {
				ref("requires", n)
			}
			cat("requiresCategory", ru.requiresCategory)
		}
		for _, i := range t.implies {
			ref("implies", i.name)
		}
		for _, n := range t.excludes {
			ref("excludes", n)
		}
		d := t.deferred
		for field, n := range map[string]int{"js": d.js, "xhr": d.xhr, "dom": d.dom + d.domProperties} {
			if n > 0 {
				r.Patterns[field] += n
			}
		}
		r.NotEvaluated += d.js + d.xhr + d.dom + d.domProperties
		r.NeedingBrowser += d.js + d.xhr + d.domProperties
	}
	return r
}

// Technologies lists the database sorted by name.
func (db *DB) Technologies() []*Technology { return slices.Clone(db.techs) }

// Lookup finds a technology by slug.
func (db *DB) Lookup(slug string) (*Technology, bool) {
	if slug == "" {
		return nil, false
	}
	t, ok := db.byKey[slug]
	return t, ok
}

// Categories lists the categories sorted by id.
func (db *DB) Categories() []Category {
	out := make([]Category, 0, len(db.categories))
	for _, c := range db.categories {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b Category) int { return a.ID - b.ID })
	return out
}

// Report counts the database and lists what it could not use, including
// implies/excludes/requires naming technologies it does not hold.
func (db *DB) Report() LoadReport {
	r := db.report
	r.Patterns = maps.Clone(r.Patterns)
	r.Problems = slices.Clone(r.Problems)
	return r
}
