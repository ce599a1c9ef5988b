package techstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/surveyor/surveyor/pkg/bus"
	"github.com/surveyor/surveyor/pkg/bus/bustest"
	"github.com/surveyor/surveyor/pkg/fingerprint"
	"github.com/surveyor/surveyor/pkg/techstore"
)

const acme = `{"Acme CMS": {"cats": [1], "website": "https://acme.example",
  "meta": {"generator": "^Acme CMS ([\\d.]+)\\;version:\\1"}}}`

func open(t *testing.T) (*techstore.Store, *bustest.Env) {
	t.Helper()
	env := bustest.Start(t, bus.Config{})
	s, err := techstore.Open(context.Background(), env.JS)
	if err != nil {
		t.Fatal(err)
	}
	return s, env
}

func TestPutGetListDelete(t *testing.T) {
	s, _ := open(t)
	ctx := context.Background()
	e, created, err := s.Put(ctx, "acme-cms", []byte(acme))
	if err != nil || !created || e.Technology.Name != "Acme CMS" || e.Revision == 0 {
		t.Fatalf("put: %+v created=%v err=%v", e, created, err)
	}
	if strings.Contains(string(e.Definition), "\n") {
		t.Fatalf("definition not compacted: %s", e.Definition)
	}
	_, created, err = s.Put(ctx, "acme-cms", []byte(strings.Replace(acme, "acme.example", "acme.test", 1)))
	if err != nil || created {
		t.Fatalf("replace: created=%v err=%v", created, err)
	}
	got, err := s.Get(ctx, "acme-cms")
	if err != nil || got.Technology.Website != "https://acme.test" {
		t.Fatalf("get after replace: %+v %v", got, err)
	}
	if _, _, err := s.Put(ctx, "zeta", []byte(`{"Zeta": {"headers": {"X-Zeta": ""}}}`)); err != nil {
		t.Fatal(err)
	}
	list, err := s.List(ctx)
	if err != nil || len(list) != 2 || list[0].Slug != "acme-cms" || list[1].Slug != "zeta" {
		t.Fatalf("list: %+v %v", list, err)
	}

	if err := s.Delete(ctx, "acme-cms"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "acme-cms"); !errors.Is(err, techstore.ErrNotFound) {
		t.Fatalf("get after delete: %v", err)
	}
	if err := s.Delete(ctx, "acme-cms"); !errors.Is(err, techstore.ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	if _, err := s.Get(ctx, "Not A Slug"); !errors.Is(err, techstore.ErrNotFound) {
		t.Fatalf("get of an impossible key: %v", err)
	}
	if list, _ := s.List(ctx); len(list) != 1 || list[0].Slug != "zeta" {
		t.Fatalf("list after delete: %+v", list)
	}
	// A deleted slug can be created again.
	if _, created, err := s.Put(ctx, "acme-cms", []byte(acme)); err != nil || !created {
		t.Fatalf("put after delete: created=%v err=%v", created, err)
	}
}

func TestPutRefusesWhatCannotBeUsed(t *testing.T) {
	s, _ := open(t)
	cases := []struct {
		name, slug, body string
		want             []string // substrings of the error
		problems         int
	}{
		{"bad regex", "broken", `{"Broken": {"html": "<div class=\"(unclosed"}}`,
			[]string{"Broken", "html", "(unclosed", "missing closing )"}, 1},
		{"bad header regex among good ones", "broken", `{"Broken": {"headers": {"Server": "ok", "X-Bad": "a[z-a]"}}}`,
			[]string{"Broken", "headers.X-Bad", "a[z-a]", "invalid character class range"}, 1},
		{"unknown field", "typo", `{"Typo": {"heders": {"Server": "x"}}}`, []string{"Typo", "heders", "unknown field"}, 1},
		{"slug mismatch", "other", acme, []string{`"acme-cms"`, `"other"`}, 0},
		{"two technologies", "a", `{"A": {}, "B": {}}`, []string{"exactly one", "2"}, 0},
		{"none", "a", `{}`, []string{"exactly one", "0"}, 0},
		{"not JSON", "a", `{"A": `, []string{"not valid JSON"}, 0},
		{"not an object", "a", `["A"]`, []string{"JSON object"}, 0},
		{"malformed field", "a", `{"A": {"cats": "one"}}`, []string{"cats", "integer"}, 0},
		{"no slug", "", `{"!!!": {}}`, []string{"no letter or digit"}, 0},
	}
	for _, c := range cases {
		_, _, err := s.Put(context.Background(), c.slug, []byte(c.body))
		var inv *techstore.InvalidError
		if !errors.As(err, &inv) {
			t.Errorf("%s: err %v, want *InvalidError", c.name, err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not mention %q", c.name, err, w)
			}
		}
		if len(inv.Problems) != c.problems {
			t.Errorf("%s: %d problems, want %d: %v", c.name, len(inv.Problems), c.problems, inv.Problems)
		}
	}
	if list, err := s.List(context.Background()); err != nil || len(list) != 0 {
		t.Fatalf("refused definitions were stored: %+v %v", list, err)
	}
}

// TestWatchFollowsChanges runs the watch on its own connection, as another
// process would, and checks every callback carries the whole custom set.
func TestWatchFollowsChanges(t *testing.T) {
	s, env := open(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, _, err := s.Put(ctx, "acme-cms", []byte(acme)); err != nil {
		t.Fatal(err)
	}
	_, js2 := env.Connect(t, "replica")
	other, err := techstore.Open(ctx, js2)
	if err != nil {
		t.Fatal(err)
	}
	seen := make(chan []string, 16)
	done := make(chan error, 1)
	go func() {
		done <- other.Watch(ctx, func(db *fingerprint.DB) {
			var slugs []string
			for _, t := range db.Technologies() {
				slugs = append(slugs, t.Slug)
			}
			seen <- slugs
		})
	}()
	expect := func(want string) {
		t.Helper()
		select {
		case got := <-seen:
			if strings.Join(got, ",") != want {
				t.Fatalf("custom set %v, want [%s]", got, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no callback; want [%s]", want)
		}
	}
	expect("acme-cms")
	if _, _, err := s.Put(ctx, "zeta", []byte(`{"Zeta": {"headers": {"X-Zeta": ""}}}`)); err != nil {
		t.Fatal(err)
	}
	expect("acme-cms,zeta")
	// A value written around Put that does not parse is skipped, not fatal.
	kv, _ := env.JS.KeyValue(ctx, bus.TechnologiesBucket)
	if _, err := kv.Put(ctx, "junk", []byte("not json")); err != nil {
		t.Fatal(err)
	}
	expect("acme-cms,zeta")
	if err := s.Delete(ctx, "acme-cms"); err != nil {
		t.Fatal(err)
	}
	expect("zeta")
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("watch ended with %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("watch did not stop with its context")
	}
}
