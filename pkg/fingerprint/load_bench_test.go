package fingerprint

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// communitySized is the size of the community database (7,586
// technologies in the revision of 2026-08-17).
const communitySized = 7500

// BenchmarkLoadCommunitySized loads a generated database the size and
// shape of the community one from files, as FINGERPRINTS_DIR is loaded,
// adds it to the built-in database and builds the engine. ns/op is the
// whole start-up cost; load-ms and engine-ms split it; heap-MB is the live
// heap the combined database and engine hold (db-heap-MB, the database
// alone); time-ratio and heap-ratio compare them with loading the built-in
// database and building its engine, measured in the same run (its heap is
// builtin-heap-MB).
func BenchmarkLoadCommunitySized(b *testing.B) {
	dir := b.TempDir()
	writeCommunityLike(b, dir, communitySized)
	builtin, err := Builtin()
	if err != nil {
		b.Fatal(err)
	}
	var db *DB
	var e *Engine
	var load, build time.Duration
	startUp := func() {
		start := time.Now()
		extra, err := LoadDir(dir)
		if err != nil {
			b.Fatal(err)
		}
		load += time.Since(start)
		start = time.Now()
		db = Combine(builtin, extra)
		e = NewEngine(db)
		build += time.Since(start)
	}
	heap := liveHeap(func() any { startUp(); return e })
	dbHeap := liveHeap(func() any {
		extra, _ := LoadDir(dir)
		return Combine(builtin, extra)
	})
	builtinStart := time.Now()
	builtinHeap := liveHeap(func() any {
		db, _ := loadFS(builtinFS, "data")
		return NewEngine(db)
	})
	builtinTime := time.Since(builtinStart)
	load, build = 0, 0

	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		startUp()
	}
	b.StopTimer()
	r := db.Report()
	if r.Technologies < communitySized || r.Backtracking == 0 {
		b.Fatalf("report %+v", r)
	}
	b.ReportMetric(float64(load.Milliseconds())/float64(b.N), "load-ms")
	b.ReportMetric(float64(build.Milliseconds())/float64(b.N), "engine-ms")
	perOp := b.Elapsed() / time.Duration(b.N)
	b.ReportMetric(float64(perOp)/float64(builtinTime), "time-ratio")
	b.ReportMetric(float64(heap)/float64(builtinHeap), "heap-ratio")
	b.ReportMetric(float64(heap)/(1<<20), "heap-MB")
	b.ReportMetric(float64(dbHeap)/(1<<20), "db-heap-MB")
	b.ReportMetric(float64(builtinHeap)/(1<<20), "builtin-heap-MB")
	b.ReportMetric(float64(r.Technologies), "technologies")
	b.ReportMetric(float64(r.Evaluated), "patterns")
}

// liveHeap returns the heap that what make returns keeps alive.
func liveHeap(make func() any) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	kept := make()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(kept)
	if after.HeapAlloc < before.HeapAlloc {
		return 0
	}
	return after.HeapAlloc - before.HeapAlloc
}

// writeCommunityLike writes n generated technologies as the community
// database lays them out (technologies/<letter>.json, categories.json),
// with its proportions: js in 44 % of technologies, dom in 21 %, xhr in
// 1.5 %, an implies in about a third, a look-around in 1 in 400, eight names
// that differ from another only in case, and descriptions, icons and
// pricing that carry no pattern.
func writeCommunityLike(tb testing.TB, dir string, n int) {
	tb.Helper()
	r := rand.New(rand.NewPCG(7, 5))
	files := map[string]map[string]any{}
	var names []string
	for i := range n {
		prod := fmt.Sprintf("%s%s%d", p0(r), []string{"ly", "kit", "hub", "io", "cart", "press", "js", "cms"}[r.IntN(8)], i)
		name := strings.ToUpper(prod[:1]) + prod[1:]
		if i < 8 {
			name = strings.ToUpper(name[:2]) + name[2:] // a name of the same slug follows
		} else if i < 16 {
			name, prod = strings.ToUpper(names[i-8][:1])+strings.ToLower(names[i-8][1:]), strings.ToLower(names[i-8])
		}
		names = append(names, name)
		d := map[string]any{
			"cats":        []int{1 + r.IntN(110)},
			"website":     "https://" + prod + ".example",
			"description": name + " is a made-up product whose definition has the shape of a real one, written for a benchmark.",
			"icon":        name + ".svg",
		}
		if r.IntN(5) == 0 {
			d["cpe"] = "cpe:2.3:a:" + prod + ":" + prod + ":*:*:*:*:*:*:*:*"
			d["oss"] = true
		} else {
			d["saas"], d["pricing"] = true, []string{"mid", "recurring"}
		}
		switch r.IntN(6) {
		case 0:
			d["scriptSrc"] = []string{`/` + prod + `(?:\.min)?\.js(?:\?ver=([\d.]+))?\;version:\1`, `cdn\.` + prod + `\.example/`}
		case 1:
			d["meta"] = map[string]any{"generator": `^` + name + `(?: ([\d.]+))?\;version:\1`}
			d["html"] = `<link[^>]+href=["'][^"']*/` + prod + `/`
		case 2:
			d["headers"] = map[string]any{"X-" + name + "-Version": `([\d.]+)\;version:\1`}
			d["cookies"] = map[string]any{prod + "_session": ""}
		case 3:
			d["html"] = []string{`<div[^>]+id=["']` + prod + `-root`, `<!-- ` + prod + ` v([\d.]+)\;version:\1`}
		case 4:
			d["scriptSrc"] = `//(?:www\.)?` + prod + `\.(?:com|io|example)/(?:sdk|widget)\.js`
		default:
			d["url"] = `^https?://[^/]+\.` + prod + `\.example/`
		}
		if i%400 == 17 {
			d["scriptSrc"] = `(?<![a-z-])` + prod + `[.-]((?:\d+\.)+\d+)(?:\.min)?\.js(?![a-z])\;version:\1`
		}
		if r.IntN(100) < 44 {
			d["js"] = map[string]string{name + ".version": `([\d.]+)\;version:\1`, "__" + prod: ""}
		}
		if r.IntN(100) < 21 {
			d["dom"] = map[string]any{
				"div#" + prod + "-app":          map[string]any{"exists": ""},
				"meta[name='" + prod + "-ver']": map[string]any{"attributes": map[string]string{"content": `([\d.]+)\;version:\1`}},
			}
		}
		if r.IntN(1000) < 15 {
			d["xhr"] = `api\.` + prod + `\.example`
		}
		if r.IntN(3) == 0 {
			d["implies"] = []string{"PHP", names[r.IntN(len(names))]}
		}
		if r.IntN(25) == 0 {
			d["requires"] = "WordPress"
		}
		file := strings.ToLower(name[:1])
		if file < "a" || file > "z" {
			file = "_"
		}
		if files[file] == nil {
			files[file] = map[string]any{}
		}
		files[file][name] = d
	}
	if err := os.MkdirAll(filepath.Join(dir, "technologies"), 0o755); err != nil {
		tb.Fatal(err)
	}
	for file, techs := range files {
		writeJSON(tb, filepath.Join(dir, "technologies", file+".json"), techs)
	}
	cats, err := builtinFS.ReadFile("data/categories.json")
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "categories.json"), cats, 0o644); err != nil {
		tb.Fatal(err)
	}
}

func writeJSON(tb testing.TB, path string, v any) {
	tb.Helper()
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		tb.Fatal(err)
	}
}

// TestCommunityLikeLoads keeps the benchmark's generator honest: what it
// writes loads, with the merges and look-arounds it claims.
func TestCommunityLikeLoads(t *testing.T) {
	dir := t.TempDir()
	writeCommunityLike(t, dir, 1000)
	db, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	r := db.Report()
	merges := 0
	for _, p := range r.Problems {
		if p.Field == "name" {
			merges++
		}
	}
	if r.Technologies != 1000-8 || merges != 8 || r.Backtracking != 3 || r.Patterns["js"] == 0 || r.Patterns["dom"] == 0 {
		t.Errorf("report: %d technologies, %d merges, %d backtracking, patterns %v", r.Technologies, merges, r.Backtracking, r.Patterns)
	}
}
