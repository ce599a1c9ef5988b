// Package techstore keeps the custom fingerprints of the /technologies area
// in the TECHNOLOGIES key-value bucket of JetStream: one key per slug, whose
// value is a Wappalyzer-format object holding exactly that technology.
// Ingest writes through Put and Delete; every scanner replica follows the
// bucket with Watch and rebuilds its engine on each change, so no process
// needs a restart to apply a new fingerprint.
package techstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/surveyor/surveyor/pkg/bus"
	"github.com/surveyor/surveyor/pkg/fingerprint"
)

// ErrNotFound: no custom technology has the slug.
var ErrNotFound = errors.New("no such custom technology")

// InvalidError is a definition Put refused. Problems lists each pattern or
// field the parser could not use (technology, field, pattern and reason);
// Reason alone explains a refusal that is not about one pattern.
type InvalidError struct {
	Reason   string
	Problems []fingerprint.Problem
}

func (e *InvalidError) Error() string {
	if len(e.Problems) == 0 {
		return e.Reason
	}
	msgs := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		msgs[i] = p.Error()
	}
	return e.Reason + ": " + strings.Join(msgs, "; ")
}

// Entry is one stored custom technology.
type Entry struct {
	Slug string
	// Definition is the stored Wappalyzer-format object, {"Name": {...}}.
	Definition json.RawMessage
	// Technology is Definition parsed. Its category names are not bound:
	// merge it with a database that holds the categories to see them.
	Technology *fingerprint.Technology
	Revision   uint64
	Updated    time.Time
}

// Store reads and writes the TECHNOLOGIES bucket.
type Store struct {
	kv jetstream.KeyValue
	// Log receives the entries Watch skips because they do not parse
	// (written to the bucket by something other than Put).
	Log *slog.Logger
}

// Open binds the bucket, which bus.Setup declares.
func Open(ctx context.Context, js jetstream.JetStream) (*Store, error) {
	kv, err := js.KeyValue(ctx, bus.TechnologiesBucket)
	if err != nil {
		return nil, fmt.Errorf("bucket %s: %w", bus.TechnologiesBucket, err)
	}
	return &Store{kv: kv, Log: slog.Default()}, nil
}

// Parse validates a definition for slug: a JSON object with exactly one
// technology, whose slug is slug, with no pattern or field the parser cannot
// use. It returns the technology and the definition compacted for storage.
// Every refusal is an *InvalidError.
func Parse(slug string, data []byte) (*fingerprint.Technology, json.RawMessage, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, data); err != nil {
		return nil, nil, &InvalidError{Reason: "body is not valid JSON: " + err.Error()}
	}
	techs, err := fingerprint.ParseTechnologies(buf.Bytes())
	if techs == nil {
		return nil, nil, &InvalidError{Reason: errString(err, "body must be a JSON object")}
	}
	if len(techs) != 1 {
		return nil, nil, &InvalidError{Reason: fmt.Sprintf(`body must hold exactly one technology, {"Name": {...}}; it holds %d`, len(techs))}
	}
	var t *fingerprint.Technology
	for _, only := range techs {
		t = only
	}
	if t.Slug == "" {
		return nil, nil, &InvalidError{Reason: fmt.Sprintf("technology name %q has no letter or digit to make a slug of", t.Name)}
	}
	if t.Slug != slug {
		return nil, nil, &InvalidError{Reason: fmt.Sprintf("technology %q has the slug %q, not %q", t.Name, t.Slug, slug)}
	}
	if err != nil {
		inv := &InvalidError{Reason: fmt.Sprintf("technology %q has definitions that cannot be used", t.Name)}
		for _, e := range unjoin(err) {
			var p fingerprint.Problem
			if errors.As(e, &p) {
				inv.Problems = append(inv.Problems, p)
			} else {
				inv.Problems = append(inv.Problems, fingerprint.Problem{Technology: t.Name, Field: "definition", Reason: e.Error()})
			}
		}
		return nil, nil, inv
	}
	return t, buf.Bytes(), nil
}

// Put validates data with Parse and stores it under slug. created is true
// when no custom technology had the slug before.
func (s *Store) Put(ctx context.Context, slug string, data []byte) (e Entry, created bool, err error) {
	t, def, err := Parse(slug, data)
	if err != nil {
		return Entry{}, false, err
	}
	rev, err := s.kv.Create(ctx, slug, def)
	created = err == nil
	if errors.Is(err, jetstream.ErrKeyExists) {
		rev, err = s.kv.Put(ctx, slug, def)
	}
	if err != nil {
		return Entry{}, false, err
	}
	return Entry{Slug: slug, Definition: def, Technology: t, Revision: rev, Updated: time.Now().UTC()}, created, nil
}

// Get returns the custom technology of slug, or ErrNotFound.
func (s *Store) Get(ctx context.Context, slug string) (Entry, error) {
	if !validKey(slug) {
		return Entry{}, ErrNotFound
	}
	kve, err := s.kv.Get(ctx, slug)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return Entry{}, ErrNotFound
	}
	if err != nil {
		return Entry{}, err
	}
	return decode(kve)
}

// Delete removes the custom technology of slug, or returns ErrNotFound.
func (s *Store) Delete(ctx context.Context, slug string) error {
	if _, err := s.Get(ctx, slug); err != nil {
		return err
	}
	return s.kv.Delete(ctx, slug)
}

// List returns every custom technology, sorted by slug.
func (s *Store) List(ctx context.Context) ([]Entry, error) {
	w, err := s.kv.WatchAll(ctx, jetstream.IgnoreDeletes())
	if err != nil {
		return nil, err
	}
	defer w.Stop()
	var out []Entry
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case kve, ok := <-w.Updates():
			if !ok {
				return nil, errors.New("technologies listing ended early")
			}
			if kve == nil { // every current value has been delivered
				slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(a.Slug, b.Slug) })
				return out, nil
			}
			if e, err := decode(kve); err == nil {
				out = append(out, e)
			}
		}
	}
}

// Watch calls apply with every custom technology once the bucket's current
// content has been read, and again after each change, until ctx ends. A
// burst of changes already waiting is applied once. apply runs on Watch's
// goroutine. Watch returns ctx's error, or an error when the watch fails.
func (s *Store) Watch(ctx context.Context, apply func(custom *fingerprint.DB)) error {
	w, err := s.kv.WatchAll(ctx)
	if err != nil {
		return err
	}
	defer w.Stop()
	current := map[string]*fingerprint.Technology{}
	initial, changed := true, false
	for {
		var kve jetstream.KeyValueEntry
		var ok bool
		if changed && !initial {
			select {
			case kve, ok = <-w.Updates():
			default:
				apply(dbOf(current))
				changed = false
				continue
			}
		} else {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case kve, ok = <-w.Updates():
			}
		}
		if !ok {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return errors.New("technologies watch ended")
		}
		changed = true
		if kve == nil {
			initial = false
			continue
		}
		if kve.Operation() != jetstream.KeyValuePut {
			delete(current, kve.Key())
			continue
		}
		e, err := decode(kve)
		if err != nil {
			s.Log.Warn("custom technology skipped", "slug", kve.Key(), "err", err)
			delete(current, kve.Key())
			continue
		}
		current[e.Slug] = e.Technology
	}
}

// Follow runs Watch until ctx ends, starting it again after a failure (a
// lost connection, say) so a long-lived process keeps applying changes.
func (s *Store) Follow(ctx context.Context, apply func(custom *fingerprint.DB)) {
	const pause = time.Second
	for {
		err := s.Watch(ctx, apply)
		if ctx.Err() != nil {
			return
		}
		s.Log.Warn("technologies watch failed; starting again", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(pause):
		}
	}
}

func dbOf(m map[string]*fingerprint.Technology) *fingerprint.DB {
	list := make([]*fingerprint.Technology, 0, len(m))
	for _, slug := range slices.Sorted(maps.Keys(m)) {
		list = append(list, m[slug])
	}
	return fingerprint.NewDB(list...)
}

func decode(kve jetstream.KeyValueEntry) (Entry, error) {
	t, def, err := Parse(kve.Key(), kve.Value())
	if err != nil {
		return Entry{}, err
	}
	return Entry{Slug: kve.Key(), Definition: def, Technology: t, Revision: kve.Revision(), Updated: kve.Created().UTC()}, nil
}

// validKey: slugs are lower-case letters, digits and inner dashes, which
// are also valid KV keys; anything else cannot be stored.
func validKey(slug string) bool {
	return slug != "" && fingerprint.Slug(slug) == slug
}

func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

func errString(err error, def string) string {
	if err == nil {
		return def
	}
	return err.Error()
}

// Base is the database custom technologies are layered on: the built-in one
// with the files of dir (FINGERPRINTS_DIR; "" for none) added to it, so a
// technology both define is one technology, found by the patterns of both
// (see fingerprint.Combine). Ingest and the scanners build it alike, so the
// API shows what scans match. problems lists what the loader could not use
// as written, for the caller to log; none of them stops the load.
func Base(dir string) (db *fingerprint.DB, problems []fingerprint.Problem, err error) {
	builtin, err := fingerprint.Builtin()
	if err != nil {
		return nil, nil, fmt.Errorf("built-in fingerprints: %w", err)
	}
	if dir == "" {
		return builtin, nil, nil
	}
	extra, err := fingerprint.LoadDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("FINGERPRINTS_DIR: %w", err)
	}
	db = fingerprint.Combine(builtin, extra)
	return db, db.Report().Problems, nil
}
