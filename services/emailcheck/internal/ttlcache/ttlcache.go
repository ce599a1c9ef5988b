// Package ttlcache remembers answers for a while and makes concurrent
// askers of the same key share one computation. emailcheck uses it for
// per-address results (CACHE_TTL) and per-domain catch-all answers, so a
// burst of identical requests costs the mail server one probe.
package ttlcache

import (
	"context"
	"sync"
	"time"
)

// Cache maps K to V for a time chosen per value. The zero value is not
// usable; call New.
type Cache[K comparable, V any] struct {
	max int

	mu sync.Mutex
	m  map[K]*entry[V]
}

type entry[V any] struct {
	done    chan struct{} // closed when val is set
	val     V
	expires time.Time // zero until done; past means stale
}

// New returns a cache of at most max finished entries.
func New[K comparable, V any](max int) *Cache[K, V] {
	return &Cache[K, V]{max: max, m: map[K]*entry[V]{}}
}

// Do returns the fresh cached value of key, or waits for a computation of
// key already running, or runs fn. fn returns the value and how long to
// keep it (0 or less: only for the callers already waiting). force skips a
// finished value but still joins a computation in flight. hit reports
// that fn did not run for this call. An error is only ctx's.
func (c *Cache[K, V]) Do(ctx context.Context, key K, force bool, fn func() (V, time.Duration)) (v V, hit bool, err error) {
	now := time.Now()
	c.mu.Lock()
	e, ok := c.m[key]
	if ok {
		select {
		case <-e.done:
			if force || !now.Before(e.expires) {
				ok = false
			}
		default: // running: join it
		}
	}
	if ok {
		c.mu.Unlock()
		select {
		case <-e.done:
			return e.val, true, nil
		case <-ctx.Done():
			return v, false, ctx.Err()
		}
	}
	e = &entry[V]{done: make(chan struct{})}
	c.m[key] = e
	c.mu.Unlock()

	val, ttl := fn()
	c.mu.Lock()
	e.val, e.expires = val, time.Now().Add(ttl)
	close(e.done)
	if ttl <= 0 && c.m[key] == e {
		delete(c.m, key)
	}
	c.trim(time.Now())
	c.mu.Unlock()
	return val, false, nil
}

// trim drops expired entries, then arbitrary finished ones, once the cache
// is over its size. Called with c.mu held.
func (c *Cache[K, V]) trim(now time.Time) {
	if len(c.m) <= c.max {
		return
	}
	for k, e := range c.m {
		select {
		case <-e.done:
			if !now.Before(e.expires) {
				delete(c.m, k)
			}
		default:
		}
	}
	for k, e := range c.m {
		if len(c.m) <= c.max*9/10 {
			break
		}
		select {
		case <-e.done:
			delete(c.m, k)
		default:
		}
	}
}

// Len is the number of entries, finished or running.
func (c *Cache[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}
