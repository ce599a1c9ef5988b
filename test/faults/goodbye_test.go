//go:build faults

package faults

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/emersion/go-smtp"
)

// At SIGTERM emailcheck says QUIT to the mail servers it keeps pooled
// sessions with, rather than just hanging up on them.
func TestEmailcheckSaysQuitAtSIGTERM(t *testing.T) {
	dnsAddr := dnsServer(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mx := &quitCounter{Listener: ln}
	s := smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) { return &mailbox{}, nil }))
	s.Domain = "mx.mail.test"
	go s.Serve(mx)
	t.Cleanup(func() { s.Close() })

	natsPort, httpPort, adminPort := freePort(t), freePort(t), freePort(t)
	api := fmt.Sprintf("http://127.0.0.1:%d", httpPort)
	env := []string{
		fmt.Sprintf("NATS_URL=nats://127.0.0.1:%d", natsPort), "ALLOW_PRIVATE_TARGETS=true", "LOG_LEVEL=warn",
		"DNS_SERVER=" + dnsAddr, fmt.Sprintf("SMTP_PORT=%d", ln.Addr().(*net.TCPAddr).Port),
		"SMTP_HELO=probe.surveyor.test", "EMAILCHECK_IDLE_TIMEOUT=10m",
	}
	start(t, "ingest", filepath.Join(binDir(t), "ingest"), append(env, "EMBEDDED_NATS=true",
		"DATA_DIR="+t.TempDir(), fmt.Sprintf("HTTP_ADDR=127.0.0.1:%d", httpPort)))
	waitReady(t, api+"/readyz")
	ec := start(t, "emailcheck", filepath.Join(binDir(t), "emailcheck"), append(env, fmt.Sprintf("ADMIN_ADDR=127.0.0.1:%d", adminPort)))
	waitReady(t, fmt.Sprintf("http://127.0.0.1:%d/readyz", adminPort))

	res, err := http.Post(api+"/v1/emails/validate", "application/json",
		strings.NewReader(`{"emails": ["alice@mail.test", "bob@mail.test", "nobody@mail.test", "carol@mail.test"]}`))
	if err != nil {
		t.Fatal(err)
	}
	var batch struct {
		Jobs []struct {
			ID string `json:"job_id"`
		} `json:"jobs"`
	}
	json.NewDecoder(res.Body).Decode(&batch)
	res.Body.Close()
	if len(batch.Jobs) != 4 {
		t.Fatalf("batch: %+v", batch)
	}
	for _, j := range batch.Jobs {
		waitStatus(t, api+"/v1/email/validate/"+j.ID, "completed", 30*time.Second)
	}
	if mx.open.Load() == 0 {
		t.Fatal("no pooled session open before SIGTERM")
	}

	ec.term(t, 30*time.Second)
	deadline := time.Now().Add(5 * time.Second)
	for mx.open.Load() > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := mx.noQuit.Load(); n != 0 || mx.open.Load() != 0 {
		t.Errorf("after SIGTERM: %d of %d connections ended without QUIT, %d still open", n, mx.conns.Load(), mx.open.Load())
	}
}

// waitStatus polls a job's document until its status is want.
func waitStatus(t *testing.T, url, want string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	var doc struct{ Status string }
	for time.Now().Before(deadline) {
		if res, err := http.Get(url); err == nil {
			json.NewDecoder(res.Body).Decode(&doc)
			res.Body.Close()
			if doc.Status == want {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s: status %q after %s, want %q", url, doc.Status, within, want)
}

// quitCounter counts connections, those open, and those that ended
// without the client's QUIT (plain-text SMTP, one command per read).
type quitCounter struct {
	net.Listener
	conns, open, noQuit atomic.Int64
}

func (l *quitCounter) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.conns.Add(1)
	l.open.Add(1)
	return &quitConn{Conn: c, l: l}, nil
}

type quitConn struct {
	net.Conn
	l    *quitCounter
	quit atomic.Bool
	once sync.Once
}

func (c *quitConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 && strings.EqualFold(strings.TrimRight(string(b[:n]), "\r\n"), "QUIT") {
		c.quit.Store(true)
	}
	if err != nil {
		c.gone()
	}
	return n, err
}

func (c *quitConn) Close() error {
	c.gone()
	return c.Conn.Close()
}

func (c *quitConn) gone() {
	c.once.Do(func() {
		if !c.quit.Load() {
			c.l.noQuit.Add(1)
		}
		c.l.open.Add(-1)
	})
}
