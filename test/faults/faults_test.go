//go:build faults

package faults

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

// A worker killed with SIGKILL in the middle of jobs loses none: another
// worker gets them after AckWait, and each ends up once in RESULTS.
func TestKilledWorkerLosesNoJob(t *testing.T) {
	port := freePort(t)
	natsServer(t, "nats", port, t.TempDir())
	s := newSystem(t, fmt.Sprintf("nats://127.0.0.1:%d", port), 1)
	s.ingest()
	site := target(t, 200*time.Millisecond)
	a := s.scanner("scanner-a", 8)
	var ids []string
	for i := 0; i < 4; i++ {
		got, code := s.post(pageURLs(site.URL, i*50, 50))
		if code != 200 {
			t.Fatalf("POST answered %d", code)
		}
		ids = append(ids, got...)
	}
	// Let some jobs finish and others be in flight, then kill.
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) && len(s.results()) < 20 {
		time.Sleep(50 * time.Millisecond)
	}
	a.kill()
	t.Logf("killed scanner-a with %d of %d results stored", len(s.results()), len(ids))
	s.scanner("scanner-b", 16)
	s.waitAll(ids, 90*time.Second)
}

// SIGTERM lets in-flight jobs finish or hands them back; nothing is lost.
func TestSIGTERMDuringWorkLosesNothing(t *testing.T) {
	port := freePort(t)
	natsServer(t, "nats", port, t.TempDir())
	s := newSystem(t, fmt.Sprintf("nats://127.0.0.1:%d", port), 1)
	s.ingest()
	site := target(t, 1500*time.Millisecond)
	a := s.scanner("scanner-a", 8)
	ids, code := s.post(pageURLs(site.URL, 0, 40))
	if code != 200 {
		t.Fatalf("POST answered %d", code)
	}
	time.Sleep(500 * time.Millisecond) // jobs in flight, none finished
	a.term(t, 15*time.Second)
	s.scanner("scanner-b", 16)
	s.waitAll(ids, 90*time.Second)
}

// Restarting NATS (file storage) under a steady stream of POSTs: while it is
// down ingest answers 503 with Retry-After at once, it recovers by itself,
// and every job that got a 200 completes exactly once.
func TestNATSRestartUnderLoad(t *testing.T) {
	port := freePort(t)
	store := t.TempDir()
	n := natsServer(t, "nats", port, store)
	s := newSystem(t, fmt.Sprintf("nats://127.0.0.1:%d", port), 1)
	s.ingest()
	site := target(t, 5*time.Millisecond)
	s.scanner("scanner", 16)
	p := s.postSteadily(site.URL, 5, 20*time.Millisecond)
	time.Sleep(1500 * time.Millisecond)
	n.kill()

	// Down: every POST is a quick 503 with Retry-After.
	for i := 0; i < 5; i++ {
		began := time.Now()
		res, err := http.Post(s.api+"/v1/scan", "application/json", stringsReader(`{"url":"`+site.URL+`/down"}`))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 503 || res.Header.Get("Retry-After") == "" {
			t.Fatalf("POST with NATS down: %d (Retry-After %q)", res.StatusCode, res.Header.Get("Retry-After"))
		}
		if took := time.Since(began); took > 2*time.Second {
			t.Fatalf("503 took %s", took)
		}
		time.Sleep(100 * time.Millisecond)
	}
	natsServer(t, "nats-again", port, store)
	// Recovered by itself: 200s come back.
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, code := s.post(pageURLs(site.URL, 1_000_000, 1)); code == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("ingest did not recover after NATS came back")
		}
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(1500 * time.Millisecond)
	ids, statuses, _ := p.finish()
	t.Logf("POST answers during the run: %v", statuses)
	if statuses[200] == 0 || statuses[503] == 0 {
		t.Fatalf("expected both 200s and 503s, got %v", statuses)
	}
	s.waitAll(ids, 90*time.Second)
}

// A three-node JetStream cluster with R3 streams and two replicas of the
// scanner: 1,000 jobs submitted while one node is killed and brought back
// all complete, once each.
func TestClusterNodeLossLosesNoJob(t *testing.T) {
	ports := []int{freePort(t), freePort(t), freePort(t)}
	routes := []int{freePort(t), freePort(t), freePort(t)}
	stores := []string{t.TempDir(), t.TempDir(), t.TempDir()}
	routeURLs := ""
	for i, r := range routes {
		if i > 0 {
			routeURLs += ","
		}
		routeURLs += fmt.Sprintf("nats://127.0.0.1:%d", r)
	}
	node := func(i int) *proc {
		return natsServer(t, fmt.Sprintf("n%d", i), ports[i], stores[i],
			"--cluster_name", "surveyor", "--cluster", fmt.Sprintf("nats://127.0.0.1:%d", routes[i]), "--routes", routeURLs)
	}
	nodes := []*proc{node(0), node(1), node(2)}
	url := fmt.Sprintf("nats://127.0.0.1:%d,nats://127.0.0.1:%d,nats://127.0.0.1:%d", ports[0], ports[1], ports[2])
	s := newSystem(t, url, 3)
	s.ingest()
	site := target(t, 2*time.Millisecond)
	s.scanner("scanner-1", 16)
	s.scanner("scanner-2", 16)

	var ids []string
	var refused int
	submit := func(from, to int) {
		for i := from; i < to; i += 50 {
			for attempt := 0; ; attempt++ {
				got, code := s.post(pageURLs(site.URL, i, 50))
				if code == 200 {
					ids = append(ids, got...)
					break
				}
				refused++
				if attempt > 60 {
					t.Fatalf("cluster refused jobs for too long (last %d)", code)
				}
				time.Sleep(500 * time.Millisecond)
			}
		}
	}
	submit(0, 400)
	nodes[1].kill()
	submit(400, 800)
	nodes[1] = node(1)
	submit(800, 1000)
	t.Logf("batches refused while the cluster healed: %d", refused)
	if len(ids) != 1000 {
		t.Fatalf("accepted %d jobs, want 1000", len(ids))
	}
	s.waitAll(ids, 3*time.Minute)
}
