//go:build faults

package faults

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Every binary with bad settings stops at start, before it connects
// anywhere (NATS_URL points at a closed port), exits non-zero and names
// each bad variable, shared and its own, and the bad entry of a list of
// CIDRs in ALLOW_PRIVATE_TARGETS.
func TestBadSettingsStopEveryBinary(t *testing.T) {
	shared := []string{"ALLOW_PRIVATE_TARGETS=127.0.0.2/32,10.300.0.0/16", "LOG_LEVEL=loud", "STREAM_REPLICAS=9", "NATS_URL=nats://127.0.0.1:1"}
	own := map[string][]string{
		"ingest":     {"CACHE_TTL=forever", "TRUSTED_PROXIES=proxy", "RATE_LIMIT=-1"},
		"scanner":    {"DNS_SERVER=resolver", "SCANNER_CONCURRENCY=0", "SCANNER_TIMEOUT=soon"},
		"sitemapper": {"DNS_SERVER=resolver", "SITEMAPPER_TIMEOUT=2m", "SITEMAPPER_JOB_BUDGET=1m"},
		"emailcheck": {"CACHE_TTL=forever", "EMAILCHECK_CONCURRENCY=0", "SMTP_HELO=bad host"},
	}
	for bin, env := range own {
		t.Run(bin, func(t *testing.T) {
			cmd := exec.Command(filepath.Join(binDir(t), bin))
			cmd.Env = append(append([]string{"PATH=/usr/bin:/bin"}, shared...), env...)
			done := make(chan struct{})
			var out []byte
			var err error
			go func() { out, err = cmd.CombinedOutput(); close(done) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				cmd.Process.Kill()
				<-done
				t.Fatalf("still running 10s after start with bad settings:\n%s", out)
			}
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() == 0 {
				t.Fatalf("exit %v, want a non-zero exit:\n%s", err, out)
			}
			for _, kv := range append(append([]string{}, shared[:3]...), env...) {
				name, _, _ := strings.Cut(kv, "=")
				if name == "SITEMAPPER_TIMEOUT" {
					continue // valid alone; the budget shorter than it is the error
				}
				if !strings.Contains(string(out), name+":") {
					t.Errorf("output does not name %s:\n%s", name, out)
				}
			}
			if !strings.Contains(string(out), `"10.300.0.0/16"`) {
				t.Errorf("output does not name the bad CIDR 10.300.0.0/16:\n%s", out)
			}
		})
	}
}
