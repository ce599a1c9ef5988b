package smtpprobe

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"github.com/surveyor/surveyor/pkg/netguard"
	"github.com/surveyor/surveyor/pkg/resolver"
	"github.com/surveyor/surveyor/services/emailcheck/internal/testservers"
)

// lab is a DNS server plus n loopback mail hosts mx0.lab.test .. mx<n-1>.
type lab struct {
	dns  *testservers.DNS
	port int
	lns  []net.Listener
	res  *resolver.Resolver
}

func newLab(t *testing.T, n int) *lab {
	t.Helper()
	l := &lab{dns: testservers.StartDNS(t)}
	l.port, l.lns = testservers.Listeners(t, n)
	for i, ln := range l.lns {
		l.dns.Add(t, fmt.Sprintf("mx%d.lab.test. 60 IN A %s", i, testservers.IP(ln)))
	}
	l.res = resolver.New(l.dns.Addr)
	l.res.HostsFile = ""
	return l
}

func (l *lab) prober(t *testing.T, edit func(*Options)) *Prober {
	o := Options{
		Port: l.port, HELO: "probe.test", From: "probe@probe.test", Targets: netguard.AllowPrivate,
		Resolver: l.res, ConnectTimeout: 2 * time.Second, BannerTimeout: 2 * time.Second,
		CommandTimeout: 2 * time.Second,
	}
	if edit != nil {
		edit(&o)
	}
	p, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

func rejectUnknown(to string) error {
	if strings.HasPrefix(to, "nobody") {
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "no such user"}
	}
	return nil
}

func TestSessionsAreShared(t *testing.T) {
	l := newLab(t, 1)
	srv := testservers.ServeSMTP(t, l.lns[0], testservers.SMTPConfig{Rcpt: rejectUnknown})
	p := l.prober(t, nil)
	ctx := context.Background()
	for i := range 10 {
		to := fmt.Sprintf("user%d@lab.test", i)
		if i%3 == 0 {
			to = "nobody" + to
		}
		out := p.Check(ctx, []string{"mx0.lab.test"}, to, false)
		if !out.Checked {
			t.Fatalf("check %d: %v", i, out.Err)
		}
		if want := map[bool]Class{true: NoSuchUser, false: Accepted}[i%3 == 0]; Classify(out.Reply) != want {
			t.Errorf("%s: %v, want %v", to, Classify(out.Reply), want)
		}
	}
	if n := srv.Conns.Load(); n != 1 {
		t.Errorf("10 sequential checks opened %d connections, want 1", n)
	}
	if n := srv.Mails.Load(); n != 1 {
		t.Errorf("10 checks sent MAIL FROM %d times, want 1 transaction", n)
	}

	var wg sync.WaitGroup
	for i := range 40 {
		wg.Go(func() {
			if out := p.Check(ctx, []string{"mx0.lab.test"}, fmt.Sprintf("c%d@lab.test", i), false); !out.Checked {
				t.Errorf("concurrent check: %v", out.Err)
			}
		})
	}
	wg.Wait()
	if m := srv.MaxOpen(); m > 2 {
		t.Errorf("%d connections open at once, limit 2", m)
	}
	if srv.Datas.Load() != 0 {
		t.Error("the probe sent DATA")
	}
}

func TestNextHostWhenFirstIsDown(t *testing.T) {
	l := newLab(t, 2)
	l.lns[0].Close() // connection refused
	srv := testservers.ServeSMTP(t, l.lns[1], testservers.SMTPConfig{})
	p := l.prober(t, nil)
	out := p.Check(context.Background(), []string{"mx0.lab.test", "mx1.lab.test"}, "a@lab.test", false)
	if !out.Checked || out.Host != "mx1.lab.test" || Classify(out.Reply) != Accepted {
		t.Fatalf("outcome %+v", out)
	}
	if srv.Rcpts.Load() != 1 {
		t.Errorf("second host saw %d RCPT TO", srv.Rcpts.Load())
	}
	out = p.Check(context.Background(), []string{"mx0.lab.test"}, "a@lab.test", false)
	if out.Checked || out.Connected || out.Err == nil {
		t.Fatalf("refused connection gave %+v", out)
	}
}

func TestSilentServer(t *testing.T) {
	l := newLab(t, 2)
	testservers.ServeSilent(t, l.lns[0])
	testservers.ServeSMTP(t, l.lns[1], testservers.SMTPConfig{})
	p := l.prober(t, func(o *Options) { o.BannerTimeout = 200 * time.Millisecond })
	out := p.Check(context.Background(), []string{"mx0.lab.test"}, "a@lab.test", false)
	var ne net.Error
	if out.Checked || !errors.As(out.Err, &ne) || !ne.Timeout() {
		t.Fatalf("silent server gave %+v", out)
	}
	out = p.Check(context.Background(), []string{"mx0.lab.test", "mx1.lab.test"}, "a@lab.test", false)
	if !out.Checked || out.Host != "mx1.lab.test" {
		t.Fatalf("no fallback after a silent server: %+v", out)
	}
}

// TestDeadServerTTL: a server that never greets is skipped by other checks
// for DeadTTL, then tried again.
func TestDeadServerTTL(t *testing.T) {
	l := newLab(t, 2)
	tarpit := testservers.ServeSilent(t, l.lns[0])
	testservers.ServeSMTP(t, l.lns[1], testservers.SMTPConfig{})
	p := l.prober(t, func(o *Options) { o.BannerTimeout, o.DeadTTL = 100*time.Millisecond, 300*time.Millisecond })
	hosts := []string{"mx0.lab.test", "mx1.lab.test"}
	for i := range 3 {
		if out := p.Check(context.Background(), hosts, fmt.Sprintf("a%d@lab.test", i), false); !out.Checked || out.Host != "mx1.lab.test" {
			t.Fatalf("check %d: %+v", i, out)
		}
	}
	if n := tarpit.Load(); n != 1 {
		t.Fatalf("3 checks connected to the tarpit %d times, want 1", n)
	}
	time.Sleep(400 * time.Millisecond)
	p.Check(context.Background(), hosts, "b@lab.test", false)
	if n := tarpit.Load(); n != 2 {
		t.Errorf("after DeadTTL the tarpit was connected to %d times in all, want 2", n)
	}
}

// TestGoodbye: pooled sessions end with QUIT both when they sit idle past
// IdleTimeout and when the prober closes (the worker's shutdown).
func TestGoodbye(t *testing.T) {
	l := newLab(t, 1)
	srv := testservers.ServeSMTP(t, l.lns[0], testservers.SMTPConfig{Rcpt: rejectUnknown})
	burst := func(p *Prober) {
		var wg sync.WaitGroup
		for i := range 20 {
			wg.Go(func() {
				if out := p.Check(context.Background(), []string{"mx0.lab.test"}, fmt.Sprintf("g%d@lab.test", i), false); !out.Checked {
					t.Errorf("check: %v", out.Err)
				}
			})
		}
		wg.Wait()
		if srv.Open() == 0 {
			t.Fatal("no pooled session left open after the burst")
		}
	}
	closed := func(what string) {
		deadline := time.Now().Add(5 * time.Second)
		for srv.Open() > 0 && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if n := srv.Open(); n > 0 {
			t.Fatalf("%s: %d connections still open", what, n)
		}
		if n := srv.NoQuit.Load(); n != 0 {
			t.Errorf("%s: %d of %d connections closed without QUIT", what, n, srv.Conns.Load())
		}
	}

	burst(l.prober(t, func(o *Options) { o.IdleTimeout = 200 * time.Millisecond }))
	closed("idle past IdleTimeout")

	p := l.prober(t, func(o *Options) { o.IdleTimeout = time.Hour })
	burst(p)
	p.Close()
	closed("shutdown")
}

// TestDeadServerConcurrent: checks that queue for the tarpit's only
// connection slot do not connect to it again once its holder timed out.
func TestDeadServerConcurrent(t *testing.T) {
	l := newLab(t, 2)
	tarpit := testservers.ServeSilent(t, l.lns[0])
	testservers.ServeSMTP(t, l.lns[1], testservers.SMTPConfig{})
	p := l.prober(t, func(o *Options) { o.BannerTimeout, o.PerServer = 200*time.Millisecond, 1 })
	var wg sync.WaitGroup
	for i := range 5 {
		wg.Go(func() {
			out := p.Check(context.Background(), []string{"mx0.lab.test", "mx1.lab.test"}, fmt.Sprintf("a%d@lab.test", i), false)
			if !out.Checked || out.Host != "mx1.lab.test" {
				t.Errorf("check %d: %+v", i, out)
			}
		})
	}
	wg.Wait()
	if n := tarpit.Load(); n != 1 {
		t.Errorf("5 concurrent checks connected to the tarpit %d times, want 1", n)
	}
}

func TestStartTLS(t *testing.T) {
	l := newLab(t, 1)
	cfg, pool := testservers.SelfSignedTLS(t, "mx0.lab.test")
	testservers.ServeSMTP(t, l.lns[0], testservers.SMTPConfig{TLS: cfg})
	for _, roots := range []bool{false, true} {
		p := l.prober(t, func(o *Options) {
			if roots {
				o.RootCAs = pool
			}
		})
		out := p.Check(context.Background(), []string{"mx0.lab.test"}, "a@lab.test", false)
		if !out.Checked || !out.TLS || Classify(out.Reply) != Accepted {
			t.Fatalf("trusted roots %v: %+v", roots, out)
		}
	}
	// The verification result itself, on a bare client.
	for _, roots := range []bool{false, true} {
		conn, err := net.Dial("tcp", l.lns[0].Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		c, err := NewClient(ctx, conn, "mx0.lab.test", time.Second, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Hello(ctx, "probe.test"); err != nil {
			t.Fatal(err)
		}
		var rp = pool
		if !roots {
			rp = nil
		}
		if err := c.StartTLS(ctx, rp); err != nil {
			t.Fatal(err)
		}
		if (c.TLSVerifyErr == nil) != roots {
			t.Errorf("trusted roots %v: verify error %v", roots, c.TLSVerifyErr)
		}
		c.Quit(ctx)
	}
}

func TestMailFromRefused(t *testing.T) {
	l := newLab(t, 1)
	srv := testservers.ServeSMTP(t, l.lns[0], testservers.SMTPConfig{Mail: func(string) error {
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 7, 1}, Message: "sender rejected"}
	}})
	p := l.prober(t, nil)
	out := p.Check(context.Background(), []string{"mx0.lab.test"}, "a@lab.test", false)
	var re *ReplyError
	if out.Checked || !out.Connected || !errors.As(out.Err, &re) || re.Cmd != "MAIL FROM" || re.Reply.Enhanced != "5.7.1" {
		t.Fatalf("outcome %+v", out)
	}
	if srv.Rcpts.Load() != 0 {
		t.Error("RCPT TO sent after a refused MAIL FROM")
	}
}

func TestPrivateAddressRefused(t *testing.T) {
	l := newLab(t, 1)
	srv := testservers.ServeSMTP(t, l.lns[0], testservers.SMTPConfig{})
	p := l.prober(t, func(o *Options) { o.Targets = netguard.PublicOnly })
	out := p.Check(context.Background(), []string{"mx0.lab.test"}, "a@lab.test", false)
	var re *netguard.RefusedError
	if out.Checked || !errors.As(out.Err, &re) {
		t.Fatalf("outcome %+v", out)
	}
	if srv.Conns.Load() != 0 {
		t.Error("connected to a loopback server without ALLOW_PRIVATE_TARGETS")
	}
}

func TestHostWithoutAddress(t *testing.T) {
	l := newLab(t, 1)
	l.dns.Add(t, "noaddr.lab.test. 60 IN TXT \"exists, no A\"")
	p := l.prober(t, nil)
	out := p.Check(context.Background(), []string{"noaddr.lab.test", "gone.lab.test"}, "a@lab.test", false)
	if out.Checked || !out.NoAddress {
		t.Fatalf("outcome %+v", out)
	}
	l.dns.Fail("broken.lab.test", 2) // SERVFAIL: not proof of "no address"
	out = p.Check(context.Background(), []string{"broken.lab.test"}, "a@lab.test", false)
	if out.Checked || out.NoAddress || !errors.Is(out.Err, resolver.ErrTemporary) {
		t.Fatalf("SERVFAIL outcome %+v", out)
	}
}

func TestDroppedIdleSessionIsReplaced(t *testing.T) {
	l := newLab(t, 1)
	srv := testservers.ServeSMTP(t, l.lns[0], testservers.SMTPConfig{Idle: 100 * time.Millisecond})
	p := l.prober(t, nil)
	ctx := context.Background()
	if out := p.Check(ctx, []string{"mx0.lab.test"}, "a@lab.test", false); !out.Checked {
		t.Fatal(out.Err)
	}
	time.Sleep(300 * time.Millisecond) // the server hangs up on the idle session
	if out := p.Check(ctx, []string{"mx0.lab.test"}, "b@lab.test", false); !out.Checked {
		t.Fatalf("after the server dropped the session: %+v", out)
	}
	if srv.Conns.Load() != 2 {
		t.Errorf("%d connections, want 2", srv.Conns.Load())
	}
}

func TestTooManyRecipientsStartsNewTransaction(t *testing.T) {
	l := newLab(t, 1)
	srv := testservers.ServeSMTP(t, l.lns[0], testservers.SMTPConfig{MaxRcpts: 3})
	p := l.prober(t, nil)
	for i := range 7 {
		out := p.Check(context.Background(), []string{"mx0.lab.test"}, fmt.Sprintf("u%d@lab.test", i), false)
		if !out.Checked || Classify(out.Reply) != Accepted {
			t.Fatalf("check %d: %+v", i, out)
		}
	}
	if m := srv.Mails.Load(); m != 3 {
		t.Errorf("MAIL FROM sent %d times for 7 recipients at 3 per transaction, want 3", m)
	}
}

func TestRejectLimitRetiresSession(t *testing.T) {
	l := newLab(t, 1)
	srv := testservers.ServeSMTP(t, l.lns[0], testservers.SMTPConfig{Rcpt: rejectUnknown})
	p := l.prober(t, func(o *Options) { o.RejectsLimit = 3 })
	for i := range 7 {
		p.Check(context.Background(), []string{"mx0.lab.test"}, fmt.Sprintf("nobody%d@lab.test", i), false)
	}
	if n := srv.Conns.Load(); n != 3 {
		t.Errorf("7 refusals at 3 per connection used %d connections, want 3", n)
	}
}

func TestSMTPUTF8(t *testing.T) {
	l := newLab(t, 2)
	testservers.ServeSMTP(t, l.lns[0], testservers.SMTPConfig{})
	testservers.ServeSMTP(t, l.lns[1], testservers.SMTPConfig{SMTPUTF8: true})
	p := l.prober(t, nil)
	out := p.Check(context.Background(), []string{"mx0.lab.test"}, "用户@lab.test", true)
	if out.Checked || !errors.Is(out.Err, ErrNoSMTPUTF8) {
		t.Fatalf("server without SMTPUTF8: %+v", out)
	}
	out = p.Check(context.Background(), []string{"mx1.lab.test"}, "用户@lab.test", true)
	if !out.Checked || Classify(out.Reply) != Accepted {
		t.Fatalf("server with SMTPUTF8: %+v", out)
	}
}

func TestClassify(t *testing.T) {
	cases := []struct {
		r    Reply
		want Class
	}{
		{Reply{Code: 250, Enhanced: "2.1.5"}, Accepted},
		{Reply{Code: 251}, Accepted},
		{Reply{Code: 550, Enhanced: "5.1.1", Message: "user unknown"}, NoSuchUser},
		{Reply{Code: 553, Enhanced: "5.1.3"}, NoSuchUser},
		{Reply{Code: 550, Message: "No such user here"}, NoSuchUser},
		{Reply{Code: 552, Message: "Mailbox full"}, MailboxFull},
		{Reply{Code: 552, Enhanced: "5.2.2"}, MailboxFull},
		{Reply{Code: 452, Enhanced: "4.2.2", Message: "over quota"}, MailboxFull},
		{Reply{Code: 550, Enhanced: "5.2.2"}, MailboxFull},
		{Reply{Code: 550, Enhanced: "5.2.1", Message: "account disabled"}, Disabled},
		{Reply{Code: 451, Enhanced: "4.7.1", Message: "try later"}, Greylisted},
		{Reply{Code: 450, Message: "Greylisted, see http://example.test"}, Greylisted},
		{Reply{Code: 451, Enhanced: "4.3.0", Message: "local error"}, Temporary},
		{Reply{Code: 421, Enhanced: "4.4.2", Message: "closing"}, Temporary},
		{Reply{Code: 550, Enhanced: "5.7.1", Message: "relay denied"}, Blocked},
		{Reply{Code: 554, Message: "Client host blocked using zen.spamhaus.org"}, Blocked},
		{Reply{Code: 354}, Unknown},
	}
	for _, c := range cases {
		if got := Classify(c.r); got != c.want {
			t.Errorf("Classify(%v) = %v, want %v", c.r, got, c.want)
		}
	}
}
