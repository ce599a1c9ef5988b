package ttlcache

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestDoCachesAndExpires(t *testing.T) {
	c := New[string, int](100)
	ctx := context.Background()
	var runs atomic.Int32
	fn := func(ttl time.Duration) func() (int, time.Duration) {
		return func() (int, time.Duration) { return int(runs.Add(1)), ttl }
	}
	if v, hit, _ := c.Do(ctx, "a", false, fn(time.Hour)); v != 1 || hit {
		t.Fatalf("first: %d %v", v, hit)
	}
	if v, hit, _ := c.Do(ctx, "a", false, fn(time.Hour)); v != 1 || !hit {
		t.Fatalf("cached: %d %v", v, hit)
	}
	if v, hit, _ := c.Do(ctx, "a", true, fn(time.Hour)); v != 2 || hit {
		t.Fatalf("forced: %d %v", v, hit)
	}
	c.Do(ctx, "b", false, fn(20*time.Millisecond))
	time.Sleep(40 * time.Millisecond)
	if v, hit, _ := c.Do(ctx, "b", false, fn(time.Hour)); hit || v != 4 {
		t.Fatalf("expired: %d %v", v, hit)
	}
	if v, _, _ := c.Do(ctx, "z", false, fn(0)); v != 5 {
		t.Fatal(v)
	}
	if v, hit, _ := c.Do(ctx, "z", false, fn(0)); hit || v != 6 {
		t.Fatalf("a value with no ttl was kept: %d %v", v, hit)
	}
}

func TestDoCoalesces(t *testing.T) {
	c := New[string, int](100)
	release := make(chan struct{})
	var runs atomic.Int32
	var wg sync.WaitGroup
	results := make([]int, 20)
	for i := range results {
		wg.Go(func() {
			v, _, err := c.Do(context.Background(), "k", false, func() (int, time.Duration) {
				runs.Add(1)
				<-release
				return 42, time.Minute
			})
			if err != nil {
				t.Error(err)
			}
			results[i] = v
		})
	}
	time.Sleep(50 * time.Millisecond) // let the callers pile up
	close(release)
	wg.Wait()
	if runs.Load() != 1 {
		t.Errorf("fn ran %d times for concurrent callers", runs.Load())
	}
	for _, v := range results {
		if v != 42 {
			t.Fatalf("a caller got %d", v)
		}
	}
}

func TestWaiterHonoursContext(t *testing.T) {
	c := New[string, int](10)
	release := make(chan struct{})
	defer close(release)
	go c.Do(context.Background(), "k", false, func() (int, time.Duration) { <-release; return 1, time.Minute })
	for c.Len() == 0 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, _, err := c.Do(ctx, "k", false, nil); err == nil {
		t.Fatal("waiter did not give up with its context")
	}
}

func TestBounded(t *testing.T) {
	c := New[int, int](50)
	for i := range 1000 {
		c.Do(context.Background(), i, false, func() (int, time.Duration) { return i, time.Hour })
	}
	if n := c.Len(); n > 50 {
		t.Fatalf("cache holds %d entries, bound 50", n)
	}
}
