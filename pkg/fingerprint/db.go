package fingerprint

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
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
	byName     map[string]*Technology
	bySlug     map[string]*Technology
	categories map[int]Category
	report     LoadReport
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
// categories.json hold categories, the rest technologies. Technology names
// must be unique across files. Patterns that cannot be used are listed in
// the report, not returned as errors.
func LoadDir(dir string) (*DB, *LoadReport, error) {
	db, err := loadFS(os.DirFS(dir), ".")
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", dir, err)
	}
	r := db.Report()
	return db, &r, nil
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
	origin := map[string]string{} // name or slug -> file defining it
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
			for id, cat := range c {
				cats[id] = cat
			}
			continue
		}
		list, err := parseTechnologies(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.ToSlash(f), err)
		}
		for _, t := range list {
			if prev, ok := origin["name:"+t.Name]; ok {
				return nil, fmt.Errorf("technology %q is defined in both %s and %s", t.Name, prev, f)
			}
			if prev, ok := origin["slug:"+t.Slug]; ok {
				return nil, fmt.Errorf("technology %q in %s has the slug %q of a technology in %s", t.Name, f, t.Slug, prev)
			}
			origin["name:"+t.Name], origin["slug:"+t.Slug] = f, f
			techs = append(techs, t)
		}
	}
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
// technology replaces an earlier one of the same name or slug. Category
// names are bound when the DB is merged with one that has categories.
func NewDB(techs ...*Technology) *DB {
	return Merge(build(nil, techs))
}

// Merge layers databases: a later layer's technology replaces an earlier
// one of the same name (or slug), and later categories replace earlier
// ones of the same id.
func Merge(layers ...*DB) *DB {
	cats := map[int]Category{}
	var order []*Technology
	for _, l := range layers {
		if l == nil {
			continue
		}
		for id, c := range l.categories {
			cats[id] = c
		}
		order = append(order, l.techs...)
	}
	// Keep each name's and slug's last definition.
	last := map[string]int{}
	for i, t := range order {
		last["name:"+t.Name], last["slug:"+t.Slug] = i, i
	}
	var techs []*Technology
	for i, t := range order {
		if last["name:"+t.Name] == i && last["slug:"+t.Slug] == i {
			techs = append(techs, t)
		}
	}
	return build(cats, techs)
}

// build binds category names and computes the report. Technologies are
// copied so that binding never changes another DB's view.
func build(cats map[int]Category, techs []*Technology) *DB {
	db := &DB{
		byName:     make(map[string]*Technology, len(techs)),
		bySlug:     make(map[string]*Technology, len(techs)),
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
		db.byName[c.Name] = &c
		db.bySlug[c.Slug] = &c
	}
	slices.SortFunc(db.techs, func(a, b *Technology) int { return strings.Compare(a.Name, b.Name) })
	db.report = db.computeReport()
	return db
}

func (db *DB) computeReport() LoadReport {
	r := LoadReport{Technologies: len(db.techs), Categories: len(db.categories)}
	for _, t := range db.techs {
		r.Patterns += len(t.patterns)
		r.NotEvaluated += t.notEvaluated
		r.Problems = append(r.Problems, t.problems...)
		ref := func(field, name string) {
			if _, ok := db.byName[name]; !ok {
				r.Problems = append(r.Problems, Problem{Technology: t.Name, Field: field, Pattern: name, Reason: "no such technology"})
			}
		}
		for _, i := range t.implies {
			ref("implies", i.name)
		}
		for _, n := range t.excludes {
			ref("excludes", n)
		}
		for _, n := range t.requires {
			ref("requires", n)
		}
		if len(db.categories) == 0 {
			continue // a layer without categories binds them when merged
		}
		for _, id := range slices.Concat(t.categoryIDs, t.requiresCategory) {
			if _, ok := db.categories[id]; !ok {
				r.Problems = append(r.Problems, Problem{Technology: t.Name, Field: "cats", Pattern: strconv.Itoa(id), Reason: "no such category"})
			}
		}
	}
	return r
}

// Technologies lists the database sorted by name.
func (db *DB) Technologies() []*Technology { return slices.Clone(db.techs) }

// Lookup finds a technology by slug.
func (db *DB) Lookup(slug string) (*Technology, bool) {
	t, ok := db.bySlug[slug]
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
	r.Problems = slices.Clone(r.Problems)
	return r
}
