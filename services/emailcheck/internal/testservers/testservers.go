// Package testservers starts the real servers emailcheck's tests talk to:
// a DNS server (miekg/dns) with a zone the test writes, and SMTP servers
// (emersion/go-smtp) whose answers the test chooses. Everything listens on
// loopback with ephemeral ports. Because the probe uses one SMTP port for
// every mail host, each test mail host gets its own 127.0.0.x address and
// all of them share one port.
package testservers

import (
	"cmp"
	"crypto/ecdsa"
	"crypto/elliptic"
	crand "crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"math/big"
	"math/rand/v2"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/emersion/go-smtp"
	"github.com/miekg/dns"
)

// DNS is an authoritative-style server for the names a test adds.
type DNS struct {
	Addr string // host:port to give the resolver

	mu     sync.Mutex
	rrs    map[string][]dns.RR // by lower-case FQDN
	rcodes map[string]int      // forced answers (SERVFAIL, ...)
}

// StartDNS serves until the test ends.
func StartDNS(t testing.TB) *DNS {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	d := &DNS{Addr: pc.LocalAddr().String(), rrs: map[string][]dns.RR{}, rcodes: map[string]int{}}
	srv := &dns.Server{PacketConn: pc, Handler: d}
	go srv.ActivateAndServe()
	t.Cleanup(func() { srv.Shutdown() })
	return d
}

// Add puts records in the zone, written as zone file lines such as
// "example.test. 60 IN MX 10 mx.example.test.".
func (d *DNS) Add(t testing.TB, lines ...string) {
	t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, l := range lines {
		rr, err := dns.NewRR(l)
		if err != nil {
			t.Fatalf("bad record %q: %v", l, err)
		}
		name := strings.ToLower(rr.Header().Name)
		d.rrs[name] = append(d.rrs[name], rr)
	}
}

// Fail makes every question about name answer rcode (dns.RcodeServerFailure, ...).
func (d *DNS) Fail(name string, rcode int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.rcodes[dns.Fqdn(strings.ToLower(name))] = rcode
}

// ServeDNS answers from the zone: NXDOMAIN for an unknown name, an empty
// answer for a known name without records of the asked type.
func (d *DNS) ServeDNS(w dns.ResponseWriter, req *dns.Msg) {
	m := new(dns.Msg)
	m.SetReply(req)
	m.Authoritative = true
	if len(req.Question) == 1 {
		q := req.Question[0]
		name := strings.ToLower(q.Name)
		d.mu.Lock()
		rcode, forced := d.rcodes[name]
		rrs, known := d.rrs[name]
		d.mu.Unlock()
		switch {
		case forced:
			m.Rcode = rcode
		case !known:
			m.Rcode = dns.RcodeNameError
		default:
			for _, rr := range rrs {
				if rr.Header().Rrtype == q.Qtype {
					m.Answer = append(m.Answer, rr)
				}
			}
		}
	}
	w.WriteMsg(m)
}

// Listeners opens a TCP listener on each of n fresh loopback addresses,
// all on one port, and returns the port. The listeners close when the test
// ends.
func Listeners(t testing.TB, n int) (int, []net.Listener) {
	t.Helper()
	for try := 0; try < 50; try++ {
		base := 2 + rand.IntN(250-n)
		first, err := net.Listen("tcp", fmt.Sprintf("127.0.0.%d:0", base))
		if err != nil {
			continue
		}
		port := first.Addr().(*net.TCPAddr).Port
		lns := []net.Listener{first}
		for i := 1; i < n; i++ {
			ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.%d:%d", base+i, port))
			if err != nil {
				break
			}
			lns = append(lns, ln)
		}
		if len(lns) == n {
			t.Cleanup(func() {
				for _, ln := range lns {
					ln.Close()
				}
			})
			return port, lns
		}
		for _, ln := range lns {
			ln.Close()
		}
	}
	t.Fatal("no common free port on the loopback addresses")
	return 0, nil
}

// IP is the address a listener from Listeners listens on, for A records.
func IP(ln net.Listener) string {
	return netip.MustParseAddrPort(ln.Addr().String()).Addr().String()
}

// SMTPConfig chooses how a test SMTP server answers.
type SMTPConfig struct {
	Mail     func(from string) error // nil accepts every sender
	Rcpt     func(to string) error   // nil accepts every recipient; return *smtp.SMTPError to refuse
	Latency  time.Duration           // wait before every reply
	TLS      *tls.Config             // offer STARTTLS with this certificate
	SMTPUTF8 bool
	Idle     time.Duration // hang up on a silent client after this (10s)
	MaxRcpts int           // refuse more RCPT TO per transaction with 452 4.5.3
}

// SMTP is a running test mail server with counters the tests check.
type SMTP struct {
	Rcpts atomic.Int64 // RCPT TO commands seen
	Mails atomic.Int64 // MAIL FROM commands seen
	Datas atomic.Int64 // DATA commands: must stay 0
	Conns atomic.Int64 // connections accepted
	// NoQuit counts connections that ended without the client's QUIT. It
	// reads the plain text, so it means something only without TLS.
	NoQuit  atomic.Int64
	open    atomic.Int64
	maxOpen atomic.Int64
}

// MaxOpen is the largest number of connections that were open at once.
func (s *SMTP) MaxOpen() int64 { return s.maxOpen.Load() }

// Open is the number of connections open now.
func (s *SMTP) Open() int64 { return s.open.Load() }

// ServeSMTP serves ln as a mail server until the test ends.
func ServeSMTP(t testing.TB, ln net.Listener, cfg SMTPConfig) *SMTP {
	s := &SMTP{}
	srv := smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) {
		return &session{s: s, cfg: &cfg}, nil
	}))
	srv.Domain = "mx.test"
	srv.TLSConfig = cfg.TLS
	srv.EnableSMTPUTF8 = cfg.SMTPUTF8
	srv.ErrorLog = discardLogger{}
	srv.ReadTimeout = cmp.Or(cfg.Idle, 10*time.Second)
	srv.MaxRecipients = cfg.MaxRcpts
	srv.WriteTimeout = 10 * time.Second
	go srv.Serve(&countingListener{Listener: ln, s: s, latency: cfg.Latency})
	t.Cleanup(func() { srv.Close() })
	return s
}

// ServeSilent accepts connections on ln and never says a word, like a
// server that hangs before its greeting (a tarpit). It returns the count of
// connections accepted.
func ServeSilent(t testing.TB, ln net.Listener) *atomic.Int64 {
	var mu sync.Mutex
	var conns []net.Conn
	var n atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return &n
}

type session struct {
	s   *SMTP
	cfg *SMTPConfig
}

func (ss *session) Mail(from string, _ *smtp.MailOptions) error {
	ss.s.Mails.Add(1)
	if ss.cfg.Mail != nil {
		return ss.cfg.Mail(from)
	}
	return nil
}

func (ss *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	ss.s.Rcpts.Add(1)
	if ss.cfg.Rcpt != nil {
		return ss.cfg.Rcpt(to)
	}
	return nil
}

func (ss *session) Data(r io.Reader) error {
	ss.s.Datas.Add(1)
	io.Copy(io.Discard, r)
	return errors.New("test server takes no mail")
}

func (ss *session) Reset()        {}
func (ss *session) Logout() error { return nil }

type discardLogger struct{}

func (discardLogger) Printf(string, ...any) {}
func (discardLogger) Println(...any)        {}

// countingListener counts open connections and delays replies.
type countingListener struct {
	net.Listener
	s       *SMTP
	latency time.Duration
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.s.Conns.Add(1)
	n := l.s.open.Add(1)
	for {
		m := l.s.maxOpen.Load()
		if n <= m || l.s.maxOpen.CompareAndSwap(m, n) {
			break
		}
	}
	return &slowConn{Conn: c, s: l.s, latency: l.latency, replyDue: true}, nil
}

// slowConn waits latency before the first write after each read (one
// reply, however many lines), notes the client's QUIT, and counts itself
// closed on Close or when the client hangs up.
type slowConn struct {
	net.Conn
	s        *SMTP
	latency  time.Duration
	replyDue bool
	quit     atomic.Bool
	once     sync.Once
}

func (c *slowConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.replyDue = true
		// Commands arrive one per read: the client waits for each reply.
		if strings.EqualFold(strings.TrimRight(string(b[:n]), "\r\n"), "QUIT") {
			c.quit.Store(true)
		}
	}
	if err != nil {
		c.gone()
	}
	return n, err
}

func (c *slowConn) Write(b []byte) (int, error) {
	if c.replyDue && c.latency > 0 {
		time.Sleep(c.latency)
	}
	c.replyDue = false
	return c.Conn.Write(b)
}

func (c *slowConn) Close() error {
	c.gone()
	return c.Conn.Close()
}

func (c *slowConn) gone() {
	c.once.Do(func() {
		if !c.quit.Load() {
			c.s.NoQuit.Add(1)
		}
		c.s.open.Add(-1)
	})
}

// SelfSignedTLS returns a server TLS config with a fresh self-signed
// certificate for host, and a pool that trusts it.
func SelfSignedTLS(t testing.TB, host string) (*tls.Config, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), crand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: host},
		DNSNames:              []string{host},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(crand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key, Leaf: cert}}}, pool
}
