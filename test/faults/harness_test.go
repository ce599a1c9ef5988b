//go:build faults

// Package faults runs Surveyor's real binaries as processes: every endpoint
// end to end against loopback sites, DNS and mail servers, and then with
// things breaking under them: killed workers, a restarted or lost NATS
// server, a node of a three-node cluster going away. The fault tests check
// that every accepted job completed exactly once in RESULTS.
//
// Run with `make test-faults` (part of `make test`): it builds bin/ and sets
// SURVEYOR_BIN.
package faults

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

func binDir(t *testing.T) string {
	dir := os.Getenv("SURVEYOR_BIN")
	if dir == "" {
		t.Skip("SURVEYOR_BIN is not set: run through make test-faults")
	}
	return dir
}

func freePort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// proc is one running binary.
type proc struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

func start(t *testing.T, name, bin string, env []string, args ...string) *proc {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() { cmd.Wait(); f.Close(); close(p.done) }()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			if len(b) > 4000 {
				b = b[len(b)-4000:]
			}
			t.Logf("--- %s log (tail) ---\n%s", name, b)
		}
	})
	return p
}

func (p *proc) kill() {
	select {
	case <-p.done:
	default:
		p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.done
	}
}

// term sends SIGTERM and waits for the process to end.
func (p *proc) term(t *testing.T, within time.Duration) {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(within):
		t.Fatalf("%s did not stop within %s of SIGTERM", p.name, within)
	}
}

// natsServer runs bin/nats-server with JetStream file storage.
func natsServer(t *testing.T, name string, port int, storeDir string, extra ...string) *proc {
	// max_payload has no flag; Surveyor's results can exceed the 1 MiB default.
	conf := filepath.Join(t.TempDir(), "nats.conf")
	if err := os.WriteFile(conf, []byte("max_payload: 8MB\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"-c", conf, "-a", "127.0.0.1", "-p", fmt.Sprint(port), "-js", "-sd", storeDir,
		"-n", name}, extra...)
	p := start(t, name, filepath.Join(binDir(t), "nats-server"), nil, args...)
	waitTCP(t, fmt.Sprintf("127.0.0.1:%d", port))
	return p
}

func waitTCP(t *testing.T, addr string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s never listened", addr)
}

func waitReady(t *testing.T, url string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if res, err := http.Get(url); err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s never became ready", url)
}

// system is ingest and scanners on a NATS server or cluster.
type system struct {
	t       *testing.T
	natsURL string
	api     string
	common  []string
}

func newSystem(t *testing.T, natsURL string, replicas int) *system {
	return &system{t: t, natsURL: natsURL, common: []string{
		"NATS_URL=" + natsURL, fmt.Sprintf("STREAM_REPLICAS=%d", replicas),
		"ALLOW_PRIVATE_TARGETS=true", "LOG_LEVEL=warn",
		"WORKER_ACK_WAIT=3s", "WORKER_GRACE=1s",
	}}
}

func (s *system) ingest() *proc {
	port := freePort(s.t)
	s.api = fmt.Sprintf("http://127.0.0.1:%d", port)
	p := start(s.t, "ingest", filepath.Join(binDir(s.t), "ingest"),
		append(s.common, fmt.Sprintf("HTTP_ADDR=127.0.0.1:%d", port)))
	waitReady(s.t, s.api+"/readyz")
	return p
}

func (s *system) scanner(name string, concurrency int) *proc {
	admin := freePort(s.t)
	p := start(s.t, name, filepath.Join(binDir(s.t), "scanner"),
		append(s.common, fmt.Sprintf("ADMIN_ADDR=127.0.0.1:%d", admin), fmt.Sprintf("SCANNER_CONCURRENCY=%d", concurrency)))
	waitReady(s.t, fmt.Sprintf("http://127.0.0.1:%d/readyz", admin))
	return p
}

// post launches scans of urls in one request, returning the ids (nil when
// the answer was not 200) and the status code.
func (s *system) post(urls []string) ([]string, int) {
	body, _ := json.Marshal(map[string]any{"urls": urls, "force": true})
	client := &http.Client{Timeout: 5 * time.Second}
	res, err := client.Post(s.api+"/v1/scans", "application/json", bytes.NewReader(body))
	if err != nil {
		return nil, 0
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		return nil, res.StatusCode
	}
	var out struct {
		Scans []struct {
			ID string `json:"scan_id"`
		} `json:"scans"`
	}
	if err := json.Unmarshal(b, &out); err != nil {
		s.t.Errorf("bad 200 body: %s", b)
		return nil, res.StatusCode
	}
	ids := make([]string, len(out.Scans))
	for i, sc := range out.Scans {
		ids[i] = sc.ID
	}
	return ids, 200
}

// results counts the messages per job id in RESULTS.
func (s *system) results() map[string]int {
	s.t.Helper()
	nc, err := nats.Connect(s.natsURL, nats.Timeout(3*time.Second))
	if err != nil {
		return nil
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	stream, err := js.Stream(ctx, "RESULTS")
	if err != nil {
		return nil
	}
	info, err := stream.Info(ctx, jetstream.WithSubjectFilter("results.>"))
	if err != nil {
		return nil
	}
	counts := map[string]int{}
	for subj, n := range info.State.Subjects {
		counts[subj[strings.LastIndexByte(subj, '.')+1:]] = int(n)
	}
	return counts
}

// waitAll waits until every id has a result, then checks each has exactly
// one, and reports accepted, completed, duplicates and lost.
func (s *system) waitAll(ids []string, within time.Duration) {
	s.t.Helper()
	deadline := time.Now().Add(within)
	var counts map[string]int
	for time.Now().Before(deadline) {
		counts = s.results()
		missing := 0
		for _, id := range ids {
			if counts[id] == 0 {
				missing++
			}
		}
		if counts != nil && missing == 0 {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	var completed, dups, lost int
	for _, id := range ids {
		switch n := counts[id]; {
		case n == 0:
			lost++
		case n > 1:
			dups++
			completed++
		default:
			completed++
		}
	}
	s.t.Logf("jobs accepted %d, completed %d, duplicates %d, lost %d", len(ids), completed, dups, lost)
	if lost > 0 || dups > 0 {
		s.t.Fatalf("%d jobs lost and %d completed more than once", lost, dups)
	}
}

// target is a loopback site whose pages answer after delay.
func target(t *testing.T, delay time.Duration) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(delay)
		w.Header().Set("Server", "nginx/1.25.3")
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<html><head><title>%s</title><meta name="generator" content="WordPress 6.4.2"></head><body>ok</body></html>`, r.URL.Path)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func pageURLs(base string, from, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s/p/%d", base, from+i)
	}
	return out
}

// poster posts batches of scans steadily until stopped, collecting the ids
// of every 200 and counting the other answers.
type poster struct {
	mu       sync.Mutex
	ids      []string
	statuses map[int]int
	slowest  time.Duration
	stop     chan struct{}
	done     chan struct{}
}

func (s *system) postSteadily(base string, batch int, every time.Duration) *poster {
	p := &poster{statuses: map[int]int{}, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		for i := 0; ; i += batch {
			select {
			case <-p.stop:
				return
			case <-time.After(every):
			}
			began := time.Now()
			ids, code := s.post(pageURLs(base, i, batch))
			took := time.Since(began)
			p.mu.Lock()
			p.ids = append(p.ids, ids...)
			p.statuses[code]++
			p.slowest = max(p.slowest, took)
			p.mu.Unlock()
		}
	}()
	return p
}

func (p *poster) finish() ([]string, map[int]int, time.Duration) {
	close(p.stop)
	<-p.done
	return p.ids, p.statuses, p.slowest
}

func stringsReader(s string) io.Reader { return strings.NewReader(s) }
