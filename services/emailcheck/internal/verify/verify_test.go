package verify

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/emersion/go-smtp"
	"github.com/miekg/dns"

	"github.com/surveyor/surveyor/pkg/config"
	"github.com/surveyor/surveyor/pkg/job"
	"github.com/surveyor/surveyor/pkg/netguard"
	"github.com/surveyor/surveyor/services/emailcheck/internal/syntax"
	"github.com/surveyor/surveyor/services/emailcheck/internal/testservers"
)

// world is a DNS zone and the mail servers it points at.
type world struct {
	dns    *testservers.DNS
	port   int
	ok     *testservers.SMTP // mailbox server with a few users
	okIP   string            // its loopback address
	catch  *testservers.SMTP // accepts everyone
	tarpit *atomic.Int64     // connections to the server that never greets
	lists  string            // EMAILCHECK_LISTS_DIR
}

// Mail hosts, one loopback address each.
const (
	ipOK = iota
	ipCatchAll
	ipClosed
	ipSilent
	ipTLS
	ipNoSender
	numIPs
)

// mailboxes answers RCPT TO like a server with a few known users.
func mailboxes(greyUntil *sync.Map) func(string) error {
	return func(to string) error {
		local, _, _ := strings.Cut(to, "@")
		switch local {
		case "alice", "info", "用户":
			return nil
		case "full":
			return &smtp.SMTPError{Code: 552, EnhancedCode: smtp.EnhancedCode{5, 2, 2}, Message: "mailbox full"}
		case "disabled":
			return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 2, 1}, Message: "account disabled"}
		case "blocked":
			return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 7, 1}, Message: "your IP is on a block list"}
		case "busy":
			return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "local error"}
		case "grey":
			first, _ := greyUntil.LoadOrStore(to, time.Now().Add(100*time.Millisecond))
			if time.Now().Before(first.(time.Time)) {
				return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 7, 1}, Message: "greylisted, try again later"}
			}
			return nil
		}
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "no such user"}
	}
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{dns: testservers.StartDNS(t)}
	var lns []net.Listener
	w.port, lns = testservers.Listeners(t, numIPs)
	ip := func(i int) string { return testservers.IP(lns[i]) }
	var grey sync.Map
	w.ok = testservers.ServeSMTP(t, lns[ipOK], testservers.SMTPConfig{Rcpt: mailboxes(&grey), SMTPUTF8: true})
	w.okIP = ip(ipOK)
	w.catch = testservers.ServeSMTP(t, lns[ipCatchAll], testservers.SMTPConfig{})
	lns[ipClosed].Close()
	w.tarpit = testservers.ServeSilent(t, lns[ipSilent])
	tlsCfg, _ := testservers.SelfSignedTLS(t, "mx.tls.test")
	testservers.ServeSMTP(t, lns[ipTLS], testservers.SMTPConfig{Rcpt: mailboxes(&grey), TLS: tlsCfg})
	testservers.ServeSMTP(t, lns[ipNoSender], testservers.SMTPConfig{Mail: func(string) error {
		return &smtp.SMTPError{Code: 553, EnhancedCode: smtp.EnhancedCode{5, 7, 1}, Message: "sender address rejected"}
	}})
	w.dns.Add(t,
		"ok.test. 60 IN MX 10 mx.ok.test.",
		"mx.ok.test. 60 IN A "+ip(ipOK),
		"catchall.test. 60 IN MX 10 mx.catchall.test.",
		"mx.catchall.test. 60 IN A "+ip(ipCatchAll),
		"nomx.test. 60 IN A "+ip(ipOK),
		"null.test. 60 IN MX 0 .",
		"noaddr.test. 60 IN MX 10 mx.noaddr.test.",
		"refused.test. 60 IN MX 10 mx.refused.test.",
		"mx.refused.test. 60 IN A "+ip(ipClosed),
		"silent.test. 60 IN MX 10 mx.silent.test.",
		"mx.silent.test. 60 IN A "+ip(ipSilent),
		"tarpit.test. 60 IN MX 10 mx.silent.test.",
		"tarpit.test. 60 IN MX 20 mx.ok.test.",
		"twomx.test. 60 IN MX 10 mx.refused.test.",
		"twomx.test. 60 IN MX 20 mx.ok.test.",
		"tls.test. 60 IN MX 10 mx.tls.test.",
		"mx.tls.test. 60 IN A "+ip(ipTLS),
		"nosender.test. 60 IN MX 10 mx.nosender.test.",
		"mx.nosender.test. 60 IN A "+ip(ipNoSender),
		"throwaway.test. 60 IN MX 10 mx.ok.test.",
		"private.test. 60 IN MX 10 mx.ok.test.",
	)
	w.dns.Fail("servfail.test", dns.RcodeServerFailure)
	w.lists = t.TempDir()
	if err := os.WriteFile(filepath.Join(w.lists, "disposable.txt"), []byte("throwaway.test\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return w
}

// config is emailcheck's configuration for the world: the variables as an
// operator would set them, and the shared settings the binary binds.
func (w *world) config(t *testing.T, env map[string]string) Config {
	t.Helper()
	m := map[string]string{
		"SMTP_PORT":                  fmt.Sprint(w.port),
		"SMTP_HELO":                  "probe.test",
		"EMAILCHECK_BANNER_TIMEOUT":  "300ms",
		"EMAILCHECK_COMMAND_TIMEOUT": "2s",
		"EMAILCHECK_LISTS_DIR":       w.lists,
	}
	for k, v := range env {
		m[k] = v
	}
	var cfg Config
	if err := config.Load(config.Map(m), &cfg); err != nil {
		t.Fatal(err)
	}
	cfg.Targets, cfg.DNSServer, cfg.CacheTTL = netguard.AllowPrivate, w.dns.Addr, 24*time.Hour
	return cfg
}

func (w *world) handler(t *testing.T, env map[string]string) *Handler {
	t.Helper()
	return w.handlerOf(t, w.config(t, env))
}

func (w *world) handlerOf(t *testing.T, cfg Config) *Handler {
	t.Helper()
	h, err := NewHandler(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	return h
}

func TestVerdicts(t *testing.T) {
	w := newWorld(t)
	h := w.handler(t, nil)
	cases := []struct {
		addr      string
		reachable job.Reachable
		check     func(r job.EmailResult) string // "" when fine
	}{
		{"alice@ok.test", job.ReachableSafe, func(r job.EmailResult) string {
			return expect(r.DNS.HasMX && r.SMTP.Checked && r.SMTP.CanConnect && r.SMTP.Deliverable &&
				!r.SMTP.CatchAll && r.SMTP.Code == 250 && r.SMTP.MXHost == "mx.ok.test")
		}},
		{"Alice@OK.test", job.ReachableInvalid, func(r job.EmailResult) string { // local parts are case-sensitive to this server
			return expect(r.Syntax.Normalized == "Alice@ok.test" && r.SMTP.Code == 550)
		}},
		{"bob@ok.test", job.ReachableInvalid, func(r job.EmailResult) string {
			return expect(r.SMTP.Checked && !r.SMTP.Deliverable && r.SMTP.EnhancedCode == "5.1.1" && r.SMTP.Message == "no such user")
		}},
		{"alice@catchall.test", job.ReachableRisky, func(r job.EmailResult) string { return expect(r.SMTP.Deliverable && r.SMTP.CatchAll) }},
		{"full@ok.test", job.ReachableRisky, func(r job.EmailResult) string {
			return expect(r.SMTP.FullInbox && !r.SMTP.Deliverable && r.SMTP.Code == 552)
		}},
		{"disabled@ok.test", job.ReachableInvalid, func(r job.EmailResult) string { return expect(r.SMTP.Disabled && r.SMTP.EnhancedCode == "5.2.1") }},
		{"grey@ok.test", job.ReachableUnknown, func(r job.EmailResult) string {
			return expect(r.SMTP.Checked && r.SMTP.Code == 451 && strings.Contains(r.SMTP.Error, "greylisted"))
		}},
		{"busy@ok.test", job.ReachableUnknown, func(r job.EmailResult) string { return expect(r.SMTP.Code == 451) }},
		{"blocked@ok.test", job.ReachableUnknown, func(r job.EmailResult) string { return expect(strings.Contains(r.SMTP.Error, "policy")) }},
		{"info@ok.test", job.ReachableRisky, func(r job.EmailResult) string { return expect(r.Misc.RoleAccount && r.SMTP.Deliverable) }},
		{"alice@throwaway.test", job.ReachableRisky, func(r job.EmailResult) string { return expect(r.Misc.Disposable && r.SMTP.Deliverable) }},
		{"用户@ok.test", job.ReachableSafe, func(r job.EmailResult) string { return expect(r.Syntax.SMTPUTF8 && r.SMTP.Deliverable) }},
		{"alice@nomx.test", job.ReachableSafe, func(r job.EmailResult) string {
			return expect(!r.DNS.HasMX && r.DNS.FallbackA && r.SMTP.MXHost == "nomx.test")
		}},
		{"alice@null.test", job.ReachableInvalid, func(r job.EmailResult) string { return expect(r.DNS.NullMX && !r.SMTP.Checked) }},
		{"alice@missing.test", job.ReachableInvalid, func(r job.EmailResult) string { return expect(r.DNS.Error != "" && !r.SMTP.Checked) }},
		{"alice@servfail.test", job.ReachableUnknown, func(r job.EmailResult) string {
			return expect(strings.Contains(r.DNS.Error, "SERVFAIL") && !r.SMTP.Checked)
		}},
		{"alice@noaddr.test", job.ReachableInvalid, func(r job.EmailResult) string {
			return expect(r.DNS.HasMX && r.DNS.Error != "" && !r.SMTP.CanConnect)
		}},
		{"alice@refused.test", job.ReachableUnknown, func(r job.EmailResult) string {
			return expect(!r.SMTP.Checked && !r.SMTP.CanConnect && strings.Contains(r.SMTP.Error, "refused"))
		}},
		{"alice@silent.test", job.ReachableUnknown, func(r job.EmailResult) string {
			return expect(!r.SMTP.Checked && !r.SMTP.CanConnect && strings.Contains(r.SMTP.Error, "timeout"))
		}},
		{"alice@twomx.test", job.ReachableSafe, func(r job.EmailResult) string {
			return expect(len(r.DNS.MX) == 2 && r.SMTP.MXHost == "mx.ok.test" && r.SMTP.Deliverable)
		}},
		{"alice@tls.test", job.ReachableSafe, func(r job.EmailResult) string { return expect(r.SMTP.Deliverable) }},
		{"bob@tls.test", job.ReachableInvalid, func(r job.EmailResult) string { return expect(r.SMTP.EnhancedCode == "5.1.1") }},
		{"alice@nosender.test", job.ReachableUnknown, func(r job.EmailResult) string {
			return expect(r.SMTP.CanConnect && !r.SMTP.Checked && strings.Contains(r.SMTP.Error, "MAIL FROM"))
		}},
		{"not an address", job.ReachableInvalid, func(r job.EmailResult) string { return expect(!r.Syntax.Valid && r.Syntax.Reason != "") }},
		{"jane@gmial.com", job.ReachableInvalid, func(r job.EmailResult) string { return expect(r.Misc.Suggestion == "jane@gmail.com") }},
		{"jane@example.con", job.ReachableInvalid, func(r job.EmailResult) string { return expect(r.Misc.Suggestion == "jane@example.com") }},
	}
	for _, c := range cases {
		t.Run(c.addr, func(t *testing.T) {
			r := h.Verify(context.Background(), c.addr, false)
			if r.Reachable != c.reachable {
				t.Errorf("reachable %q, want %q; result %+v", r.Reachable, c.reachable, r)
			}
			if msg := c.check(r); msg != "" {
				t.Errorf("%s: %+v", msg, r)
			}
		})
	}
	if n := w.ok.Datas.Load() + w.catch.Datas.Load(); n != 0 {
		t.Errorf("DATA sent %d times", n)
	}
}

func expect(ok bool) string {
	if ok {
		return ""
	}
	return "result details wrong"
}

func TestPrivateTargetsRefused(t *testing.T) {
	w := newWorld(t)
	cfg := w.config(t, nil)
	cfg.Targets = netguard.PublicOnly
	h := w.handlerOf(t, cfg)
	r := h.Verify(context.Background(), "alice@private.test", false)
	if r.Reachable != job.ReachableUnknown || r.SMTP.CanConnect || !strings.Contains(r.SMTP.Error, "not a public address") {
		t.Fatalf("%+v", r)
	}
	if w.ok.Conns.Load() != 0 {
		t.Error("connected to a loopback mail server")
	}
}

// With ALLOW_PRIVATE_TARGETS a list holding only the mailbox server's
// loopback address, that server is probed and the catch-all server, on
// another loopback address, is refused without a connection.
func TestTargetsListProbesOnlyListedRanges(t *testing.T) {
	w := newWorld(t)
	cfg := w.config(t, nil)
	var err error
	if cfg.Targets, err = netguard.ParsePolicy(w.okIP + "/32"); err != nil {
		t.Fatal(err)
	}
	h := w.handlerOf(t, cfg)
	if r := h.Verify(context.Background(), "alice@ok.test", false); r.Reachable != job.ReachableSafe || !r.SMTP.Deliverable {
		t.Errorf("listed server: %+v", r)
	}
	r := h.Verify(context.Background(), "alice@catchall.test", false)
	if r.Reachable != job.ReachableUnknown || r.SMTP.CanConnect || !strings.Contains(r.SMTP.Error, "not a public address") {
		t.Errorf("unlisted server: %+v", r)
	}
	if w.ok.Conns.Load() == 0 || w.catch.Conns.Load() != 0 {
		t.Errorf("connections: listed server %d (want some), unlisted %d (want 0)", w.ok.Conns.Load(), w.catch.Conns.Load())
	}
}

func TestGreylistRetry(t *testing.T) {
	w := newWorld(t)
	h := w.handler(t, map[string]string{"EMAILCHECK_GREYLIST_RETRY": "150ms"})
	r := h.Verify(context.Background(), "grey@ok.test", false)
	if r.Reachable != job.ReachableSafe || !r.SMTP.Deliverable {
		t.Fatalf("after the greylisting delay: %+v", r)
	}
	// A deadline too short for the delay gives up at once.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	h2 := w.handler(t, map[string]string{"EMAILCHECK_GREYLIST_RETRY": "1h"})
	if r := h2.Verify(ctx, "grey@tls.test", false); r.Reachable != job.ReachableUnknown {
		t.Fatalf("retry beyond the deadline: %+v", r)
	}
}

func TestCachesAndSharing(t *testing.T) {
	w := newWorld(t)
	h := w.handler(t, nil)
	ctx := context.Background()
	h.Verify(ctx, "alice@ok.test", false)
	before := w.ok.Rcpts.Load()
	if r := h.Verify(ctx, "alice@ok.test", false); r.Reachable != job.ReachableSafe {
		t.Fatal(r)
	}
	if w.ok.Rcpts.Load() != before {
		t.Error("a cached address was probed again")
	}
	h.Verify(ctx, "alice@ok.test", true)
	if w.ok.Rcpts.Load() != before+1 {
		t.Errorf("force: %d RCPT TO, want 1 (catch-all answer stays cached)", w.ok.Rcpts.Load()-before)
	}

	// Many addresses of one catch-all domain at once: one catch-all probe,
	// one RCPT TO each, at most two connections.
	var wg sync.WaitGroup
	for i := range 30 {
		wg.Go(func() {
			if r := h.Verify(ctx, fmt.Sprintf("user%d@catchall.test", i), false); r.Reachable != job.ReachableRisky {
				t.Errorf("%+v", r)
			}
		})
	}
	wg.Wait()
	if n := w.catch.Rcpts.Load(); n != 31 {
		t.Errorf("%d RCPT TO for 30 addresses, want 31 (one catch-all probe)", n)
	}
	if n := w.catch.MaxOpen(); n > 2 {
		t.Errorf("%d connections at once, limit 2", n)
	}
	if n := w.catch.Conns.Load(); n > 2 {
		t.Errorf("%d connections opened for one domain, want at most 2", n)
	}
}

func TestHandle(t *testing.T) {
	w := newWorld(t)
	h := w.handler(t, nil)
	res, err := h.Handle(context.Background(), &job.Job{Kind: job.Email, Email: "alice@ok.test"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		t.Fatal(err)
	}
	doc := map[string]map[string]any{}
	for _, k := range []string{"syntax", "dns", "smtp", "misc"} {
		var m map[string]any
		if err := json.Unmarshal(top[k], &m); err != nil {
			t.Fatalf("%s: %v in %s", k, err, b)
		}
		doc[k] = m
	}
	want := map[string][]string{
		"syntax": {"valid", "local_part", "domain", "normalized"},
		"dns":    {"has_mx", "mx", "null_mx", "fallback_a"},
		"smtp":   {"checked", "can_connect", "deliverable", "catch_all", "full_inbox", "disabled", "code", "mx_host"},
		"misc":   {"disposable", "role_account", "free_provider"},
	}
	for part, keys := range want {
		for _, k := range keys {
			if _, ok := doc[part][k]; !ok {
				t.Errorf("result lacks %s.%s: %s", part, k, b)
			}
		}
	}
	if string(top["reachable"]) != `"safe"` {
		t.Errorf("reachable %s", top["reachable"])
	}
	mx, _ := doc["dns"]["mx"].([]any)
	if len(mx) != 1 || mx[0].(map[string]any)["host"] != "mx.ok.test" {
		t.Errorf("dns.mx %v", doc["dns"]["mx"])
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := h.Handle(ctx, &job.Job{Kind: job.Email, Email: "someone@silent.test"}, nil); err == nil {
		t.Error("a cancelled validation returned a result instead of an error")
	}
	if _, err := h.Handle(context.Background(), &job.Job{Kind: job.Scan, URL: "https://x.test"}, nil); err == nil {
		t.Error("a scan job was accepted")
	}
}

// TestDeadServerWaitedOnce: the primary MX is a tarpit, the backup
// answers. The catch-all probe that follows the address's own check skips
// the tarpit (the job remembers it), and so does the next validation (the
// prober remembers it for a while): one banner timeout in all.
func TestDeadServerWaitedOnce(t *testing.T) {
	w := newWorld(t)
	const banner = time.Second
	h := w.handler(t, map[string]string{"EMAILCHECK_BANNER_TIMEOUT": banner.String()})
	start := time.Now()
	r := h.Verify(context.Background(), "alice@tarpit.test", false)
	took := time.Since(start)
	if r.Reachable != job.ReachableSafe || r.SMTP.MXHost != "mx.ok.test" || r.SMTP.CatchAll {
		t.Fatalf("got %s %+v", r.Reachable, r.SMTP)
	}
	if n := w.tarpit.Load(); n != 1 {
		t.Errorf("the tarpit was connected to %d times, want 1", n)
	}
	if w.ok.Rcpts.Load() != 2 {
		t.Errorf("backup saw %d RCPT TO, want the address and the catch-all probe", w.ok.Rcpts.Load())
	}
	// Waiting twice takes at least 2 banner timeouts; once, one plus the
	// backup's few loopback round trips.
	if took < banner || took >= 2*banner {
		t.Errorf("validation took %v, want one banner timeout (%v) plus the backup's time", took, banner)
	}

	start = time.Now()
	var wg sync.WaitGroup
	for _, a := range []string{"info@tarpit.test", "bob@tarpit.test"} {
		wg.Go(func() {
			if r := h.Verify(context.Background(), a, false); r.SMTP.MXHost != "mx.ok.test" || !r.SMTP.Checked {
				t.Errorf("%s: %+v", a, r.SMTP)
			}
		})
	}
	wg.Wait()
	if n := w.tarpit.Load(); n != 1 {
		t.Errorf("later validations connected to the tarpit again (%d connections)", n)
	}
	if took := time.Since(start); took >= banner {
		t.Errorf("later validations took %v, waiting on the tarpit again", took)
	}
}

// TestProxy: with SMTP_PROXY every SMTP connection goes through a real
// SOCKS5 server on loopback, which is given checked IP literals only; a
// refused target never reaches it; a proxy that is down or refuses us
// gives "unknown" with the reason.
func TestProxy(t *testing.T) {
	w := newWorld(t)
	sp := testservers.StartSOCKS5(t, "probe", "s3cret")
	h := w.handler(t, map[string]string{"SMTP_PROXY": "socks5://probe:s3cret@" + sp.Addr})
	for addr, want := range map[string]job.Reachable{"alice@ok.test": job.ReachableSafe, "bob@ok.test": job.ReachableInvalid} {
		if r := h.Verify(context.Background(), addr, false); r.Reachable != want {
			t.Errorf("%s through the proxy: %s %+v, want %s", addr, r.Reachable, r.SMTP, want)
		}
	}
	targets := sp.Targets()
	if len(targets) == 0 || int64(len(targets)) != w.ok.Conns.Load() || sp.Conns.Load() != w.ok.Conns.Load() {
		t.Errorf("proxy: %d clients, asked for %v; the mail server had %d connections", sp.Conns.Load(), targets, w.ok.Conns.Load())
	}
	for _, a := range targets {
		if ap, err := netip.ParseAddrPort(a); err != nil || int(ap.Port()) != w.port {
			t.Errorf("the proxy was asked for %q, not a checked IP address and SMTP_PORT", a)
		}
	}

	// The guard runs before the proxy is asked: a loopback proxy is fine,
	// a loopback mail server is not when private targets are off.
	guarded := testservers.StartSOCKS5(t, "", "")
	cfg := w.config(t, map[string]string{"SMTP_PROXY": "socks5://" + guarded.Addr})
	cfg.Targets = netguard.PublicOnly
	if r := w.handlerOf(t, cfg).Verify(context.Background(), "alice@ok.test", false); r.Reachable != job.ReachableUnknown ||
		!strings.Contains(r.SMTP.Error, "refused target") || guarded.Conns.Load() != 0 {
		t.Errorf("private target through the proxy: %s %q, proxy clients %d", r.Reachable, r.SMTP.Error, guarded.Conns.Load())
	}

	down := testservers.StartSOCKS5(t, "", "")
	down.Stop()
	wrong := testservers.StartSOCKS5(t, "probe", "other")
	for name, url := range map[string]string{"down": "socks5://" + down.Addr, "wrong password": "socks5://probe:s3cret@" + wrong.Addr} {
		before := w.ok.Conns.Load()
		r := w.handler(t, map[string]string{"SMTP_PROXY": url}).Verify(context.Background(), "alice@ok.test", false)
		if r.Reachable != job.ReachableUnknown || r.SMTP.Error == "" || w.ok.Conns.Load() != before {
			t.Errorf("proxy %s: %s %q", name, r.Reachable, r.SMTP.Error)
		}
		if name == "down" && !strings.Contains(r.SMTP.Error, "SMTP proxy") {
			t.Errorf("proxy down: reason %q does not name the proxy", r.SMTP.Error)
		}
	}
}

func TestConfig(t *testing.T) {
	var c Config
	if err := config.Load(config.Map(nil), &c); err != nil {
		t.Fatal(err)
	}
	if c.SMTPPort != 25 || c.PerServer != 2 || c.Timeout != 2*time.Minute || c.GreylistRetry != 0 {
		t.Errorf("defaults %+v", c)
	}
	if helo, from := c.identity(); from != "verify@"+helo || !syntax.Parse(from).Valid {
		t.Errorf("default identity %q, %q", helo, from)
	}
	c.HELO = "probe.test"
	if _, from := c.identity(); from != "verify@probe.test" {
		t.Errorf("SMTP_FROM does not follow SMTP_HELO: %q", from)
	}
	err := config.Load(config.Map(map[string]string{
		"SMTP_PORT":             "70000",
		"SMTP_FROM":             "not-an-address",
		"SMTP_HELO":             "bad host",
		"EMAILCHECK_PER_SERVER": "0",
		"EMAILCHECK_TIMEOUT":    "forever",
		"EMAILCHECK_LISTS_DIR":  "/nonexistent/lists",
		"SMTP_PROXY":            "socks5h://proxy.example:1080",
	}), &c)
	if err == nil {
		t.Fatal("bad values accepted")
	}
	for _, name := range []string{"SMTP_PORT", "SMTP_FROM", "SMTP_HELO", "EMAILCHECK_PER_SERVER", "EMAILCHECK_TIMEOUT", "EMAILCHECK_LISTS_DIR", "SMTP_PROXY"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error does not name %s: %v", name, err)
		}
	}
}
