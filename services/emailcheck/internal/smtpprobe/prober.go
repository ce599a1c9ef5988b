package smtpprobe

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/surveyor/surveyor/pkg/netguard"
	"github.com/surveyor/surveyor/pkg/obs"
	"github.com/surveyor/surveyor/pkg/resolver"
)

var (
	connectionsOpened = obs.Default.NewCounterVec("surveyor_smtp_connections_opened_total", "SMTP connections opened to mail servers.").With()
	rcptSent          = obs.Default.NewCounterVec("surveyor_smtp_rcpt_total", "RCPT TO commands sent.").With()
)

// Bounds on how far one check wanders.
const (
	maxHosts        = 5 // MX hosts tried per check
	maxAddrsPerHost = 2 // addresses tried per MX host
)

// Options configures a Prober. Zero durations and counts take the defaults
// noted on each field.
type Options struct {
	Port    int             // SMTP port of every mail server (25)
	HELO    string          // our name in EHLO/HELO
	From    string          // reverse path in MAIL FROM
	Targets netguard.Policy // addresses that may be probed

	ConnectTimeout time.Duration // TCP connect (10s)
	BannerTimeout  time.Duration // wait for the 220 greeting (30s)
	CommandTimeout time.Duration // wait for each reply (30s)
	IdleTimeout    time.Duration // close a pooled session unused this long (20s)
	// DeadTTL is how long a server that timed out or refused a connection
	// is skipped by every check (1m); within one validation (see ForJob) it
	// is skipped for good.
	DeadTTL time.Duration

	PerServer    int // live connections per mail server at most (2)
	RcptPerTx    int // RCPT TO per transaction before RSET (50)
	RcptPerConn  int // RCPT TO per connection before QUIT (200)
	RejectsLimit int // refused RCPT TO per connection before QUIT (8)

	// Proxy, when set, is the SOCKS5 proxy every connection goes through
	// (see ParseProxy). Targets still decides which addresses it is asked
	// to connect to.
	Proxy *url.URL

	// Resolver finds the MX hosts' addresses.
	Resolver netguard.Resolver
	// RootCAs verifies STARTTLS certificates (nil: system roots). The result
	// is only recorded; see Client.TLSVerifyErr.
	RootCAs *x509.CertPool
}

func (o *Options) defaults() {
	set := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	set(&o.ConnectTimeout, 10*time.Second)
	set(&o.BannerTimeout, 30*time.Second)
	set(&o.CommandTimeout, 30*time.Second)
	set(&o.IdleTimeout, 20*time.Second)
	set(&o.DeadTTL, time.Minute)
	seti := func(n *int, v int) {
		if *n <= 0 {
			*n = v
		}
	}
	seti(&o.Port, 25)
	seti(&o.PerServer, 2)
	seti(&o.RcptPerTx, 50)
	seti(&o.RcptPerConn, 200)
	seti(&o.RejectsLimit, 8)
}

// Outcome is the result of asking the MX hosts of a domain about one
// recipient.
type Outcome struct {
	Checked   bool   // a server answered RCPT TO; Reply holds it
	Reply     Reply  // the RCPT TO answer
	Connected bool   // a server greeted us
	Host      string // the MX host that answered last
	TLS       bool   // the session ran over STARTTLS
	NoAddress bool   // no MX host has an address at all
	Err       error  // why there is no answer
}

// ErrNoSMTPUTF8 means the address needs SMTPUTF8 and the server lacks it.
var ErrNoSMTPUTF8 = errors.New("the server does not offer SMTPUTF8, which this address needs")

// Prober runs checks over pooled sessions. It is safe for concurrent use.
type Prober struct {
	o      Options
	dialer *dialer

	mu      sync.Mutex
	servers map[netip.AddrPort]*server
	closed  atomic.Bool
	stop    chan struct{}
	swept   sync.WaitGroup

	deadMu sync.Mutex
	dead   map[netip.AddrPort]deadServer // servers skipped until a time
}

// deadServer is a server that timed out or refused us, and why.
type deadServer struct {
	until time.Time
	err   error
}

// server is one mail server's pool of PerServer connection slots: each
// is an idle live session in idle, a token in free (no connection), or held
// by a check. Holding a slot is the right to one connection, so there are
// never more than PerServer.
type server struct {
	idle  chan *session
	free  chan struct{}
	refs  int         // checks holding this server, guarded by Prober.mu
	noTLS atomic.Bool // STARTTLS failed here once; go on in plain text
}

// acquire takes a slot, preferring a live session to a new connection. A
// nil session means: open one.
func (srv *server) acquire(ctx context.Context) (*session, error) {
	select {
	case s := <-srv.idle:
		return s, nil
	default:
	}
	select {
	case s := <-srv.idle:
		return s, nil
	case <-srv.free:
		return nil, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (srv *server) put(s *session) {
	if s == nil {
		srv.free <- struct{}{}
	} else {
		srv.idle <- s
	}
}

type session struct {
	c        *Client
	host     string
	inTx     bool // MAIL FROM accepted, no RSET since
	txUTF8   bool
	txRcpts  int
	rcpts    int
	rejects  int
	retire   bool // the server said 421, or the session hit a limit
	lastUsed time.Time
}

// New returns a Prober. Close it to hang up its idle sessions.
func New(o Options) (*Prober, error) {
	o.defaults()
	if o.Resolver == nil {
		o.Resolver = resolver.New("")
	}
	d, err := newDialer(o)
	if err != nil {
		return nil, err
	}
	p := &Prober{
		o:       o,
		dialer:  d,
		servers: map[netip.AddrPort]*server{},
		stop:    make(chan struct{}),
		dead:    map[netip.AddrPort]deadServer{},
	}
	p.swept.Add(1)
	go p.sweepLoop()
	return p, nil
}

// Close quits idle sessions and stops the sweeper. Sessions in use are
// closed when their checks end.
func (p *Prober) Close() {
	if p.closed.Swap(true) {
		return
	}
	close(p.stop)
	p.swept.Wait()
	p.sweep(time.Now().Add(24 * time.Hour))
}

// Check asks the MX hosts, in order, about rcpt. The next host is tried
// only when one cannot be reached or refuses to talk to us; an answer to
// RCPT TO is final (backup MXs often accept anything).
func (p *Prober) Check(ctx context.Context, hosts []string, rcpt string, utf8 bool) Outcome {
	var last Outcome
	noAddress := true
	for _, host := range hosts[:min(len(hosts), maxHosts)] {
		addrs, err := p.o.Resolver.LookupNetIP(ctx, "ip", host)
		if err != nil || len(addrs) == 0 {
			if err == nil || !errors.Is(err, resolver.ErrNotFound) {
				noAddress = false
			}
			last.Err = fmt.Errorf("mail host %s: %w", host, noAddressErr(err))
			continue
		}
		noAddress = false
		for _, a := range addrs[:min(len(addrs), maxAddrsPerHost)] {
			out, next := p.checkServer(ctx, host, netip.AddrPortFrom(a.Unmap(), uint16(p.o.Port)), rcpt, utf8)
			out.Connected = out.Connected || last.Connected
			if !next || ctx.Err() != nil {
				return out
			}
			last = out
		}
	}
	last.NoAddress = noAddress
	return last
}

func noAddressErr(err error) error {
	if err == nil {
		return errors.New("no address")
	}
	return err
}

// checkServer asks one server. next reports whether another server may do
// better (this one could not be reached or would not talk).
func (p *Prober) checkServer(ctx context.Context, host string, ap netip.AddrPort, rcpt string, utf8 bool) (out Outcome, next bool) {
	out.Host = host
	if err := p.deadErr(ctx, ap); err != nil {
		out.Err = err
		return out, true
	}
	srv := p.server(ap)
	defer p.unref(srv)
	s, err := srv.acquire(ctx)
	if err != nil {
		out.Err = err
		return out, false
	}
	defer func() { p.release(srv, s) }()
	if s == nil {
		// While we waited for the slot, its holder may have found ap dead.
		if err := p.deadErr(ctx, ap); err != nil {
			out.Err = err
			return out, true
		}
	}

	for attempt := 0; attempt < 2; attempt++ {
		reused := s != nil
		if s != nil && time.Since(s.lastUsed) > p.o.IdleTimeout {
			s.c.Quit(ctx)
			s, reused = nil, false
		}
		if s == nil {
			s, err = p.open(ctx, host, ap, srv)
			if err != nil {
				out.Err = err
				var re *ReplyError
				out.Connected = errors.As(err, &re) && re.Cmd != "greeting"
				return out, true
			}
		}
		out.Connected, out.TLS = true, s.c.TLS
		r, err := s.rcpt(ctx, p.o, rcpt, utf8)
		s.lastUsed = time.Now()
		var re *ReplyError
		refused := errors.As(err, &re)
		// A reused session that fails or hears 421 was most likely dropped
		// by the server while it sat idle: one more try on a new connection.
		dead := err != nil && !refused && !errors.Is(err, ErrNoSMTPUTF8) ||
			r.Code == 421 || refused && re.Reply.Code == 421
		if dead && reused && ctx.Err() == nil {
			s.c.Close()
			s = nil
			continue
		}
		switch {
		case err == nil:
			out.Checked, out.Reply = true, r
		case errors.Is(err, ErrNoSMTPUTF8):
			out.Err = err
		case refused: // MAIL FROM or RSET refused: not this session again
			out.Err = err
			s.c.Quit(ctx)
			s = nil
		default:
			out.Err = err
			s.c.Close()
			s = nil
		}
		return out, false
	}
	return out, false
}

// open connects, reads the greeting, says EHLO and starts TLS if offered.
func (p *Prober) open(ctx context.Context, host string, ap netip.AddrPort, srv *server) (*session, error) {
	conn, err := p.dialer.dial(ctx, host, ap)
	if err != nil {
		p.noteDead(ctx, ap, err)
		return nil, err
	}
	connectionsOpened.Inc()
	c, err := NewClient(ctx, conn, host, p.o.BannerTimeout, p.o.CommandTimeout)
	if err != nil {
		p.noteDead(ctx, ap, err)
		return nil, err
	}
	if err := c.Hello(ctx, p.o.HELO); err != nil {
		c.Quit(ctx)
		return nil, err
	}
	if _, ok := c.Extension("STARTTLS"); ok && !srv.noTLS.Load() {
		if err := c.StartTLS(ctx, p.o.RootCAs); err != nil {
			// A server that offers TLS and cannot finish it usually takes
			// the conversation in plain text; senders fall back the same way.
			c.Close()
			var re *ReplyError
			if errors.As(err, &re) || ctx.Err() != nil {
				return nil, err
			}
			srv.noTLS.Store(true)
			return p.open(ctx, host, ap, srv)
		}
		if err := c.Hello(ctx, p.o.HELO); err != nil {
			c.Close()
			return nil, err
		}
	}
	return &session{c: c, host: host, lastUsed: time.Now()}, nil
}

// rcpt sends RCPT TO inside an open transaction, opening one with MAIL
// FROM (after RSET when the current one is full or lacks SMTPUTF8).
func (s *session) rcpt(ctx context.Context, o Options, to string, utf8 bool) (Reply, error) {
	if utf8 {
		if _, ok := s.c.Extension("SMTPUTF8"); !ok {
			return Reply{}, ErrNoSMTPUTF8
		}
	}
	for try := 0; ; try++ {
		if s.inTx && (s.txRcpts >= o.RcptPerTx || utf8 && !s.txUTF8) {
			if err := s.c.Reset(ctx); err != nil {
				return Reply{}, err
			}
			s.inTx = false
		}
		if !s.inTx {
			if err := s.c.Mail(ctx, o.From, utf8); err != nil {
				return Reply{}, err
			}
			s.inTx, s.txUTF8, s.txRcpts = true, utf8, 0
		}
		r, err := s.c.Rcpt(ctx, to)
		if err != nil {
			return r, err
		}
		rcptSent.Inc()
		s.txRcpts++
		s.rcpts++
		// 452 4.5.3: too many recipients in this transaction (RFC 5321
		// 4.5.3.1.10). Start a new one once.
		if r.Code == 452 && r.Enhanced == "4.5.3" && s.txRcpts > 1 && try == 0 {
			s.txRcpts = o.RcptPerTx
			continue
		}
		if r.Code/100 == 5 {
			s.rejects++
		}
		// Stay below the error limits servers keep per connection (Postfix
		// slows down after 10 refusals and hangs up after 20).
		s.retire = r.Code == 421 || s.rcpts >= o.RcptPerConn || s.rejects >= o.RejectsLimit
		return r, nil
	}
}

// server returns the pool of ap, counting the caller as a user.
func (p *Prober) server(ap netip.AddrPort) *server {
	p.mu.Lock()
	defer p.mu.Unlock()
	srv := p.servers[ap]
	if srv == nil {
		srv = &server{idle: make(chan *session, p.o.PerServer), free: make(chan struct{}, p.o.PerServer)}
		for range p.o.PerServer {
			srv.free <- struct{}{}
		}
		p.servers[ap] = srv
	}
	srv.refs++
	return srv
}

func (p *Prober) unref(srv *server) {
	p.mu.Lock()
	srv.refs--
	p.mu.Unlock()
}

// release puts a session (or nil, a free slot) back into its pool.
func (p *Prober) release(srv *server, s *session) {
	if s != nil && (s.retire || p.closed.Load()) {
		ctx, cancel := context.WithTimeout(context.Background(), p.o.CommandTimeout)
		s.c.Quit(ctx)
		cancel()
		s = nil
	}
	srv.put(s)
}

func (p *Prober) sweepLoop() {
	defer p.swept.Done()
	t := time.NewTicker(max(p.o.IdleTimeout/2, 100*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case now := <-t.C:
			p.sweep(now)
		}
	}
}

// sweep quits sessions idle since before now-IdleTimeout and forgets
// servers that have no sessions and no users, so the pool map stays as
// small as the set of servers in recent use.
func (p *Prober) sweep(now time.Time) {
	p.mu.Lock()
	servers := make(map[netip.AddrPort]*server, len(p.servers))
	for ap, srv := range p.servers {
		servers[ap] = srv
	}
	p.mu.Unlock()
	p.deadMu.Lock()
	for ap, d := range p.dead {
		if now.After(d.until) {
			delete(p.dead, ap)
		}
	}
	p.deadMu.Unlock()
	for ap, srv := range servers {
		var keep []*session
	take:
		for range cap(srv.idle) {
			select {
			case s := <-srv.idle:
				if now.Sub(s.lastUsed) > p.o.IdleTimeout {
					ctx, cancel := context.WithTimeout(context.Background(), p.o.CommandTimeout)
					s.c.Quit(ctx)
					cancel()
					srv.put(nil)
				} else {
					keep = append(keep, s)
				}
			default:
				break take
			}
		}
		for _, s := range keep {
			srv.put(s)
		}
		p.mu.Lock()
		if srv.refs == 0 && len(srv.free) == cap(srv.free) {
			delete(p.servers, ap)
		}
		p.mu.Unlock()
	}
}

// jobKey carries a validation's own memory of dead servers in its context.
type jobKey struct{}

// jobDead is the servers that timed out or refused during one validation.
type jobDead struct {
	mu sync.Mutex
	m  map[netip.AddrPort]error
}

// ForJob returns a context for the checks of one validation: a server that
// timed out or refused in one of them is not tried again by the others,
// however long the validation lasts.
func ForJob(ctx context.Context) context.Context {
	return context.WithValue(ctx, jobKey{}, &jobDead{m: map[netip.AddrPort]error{}})
}

// noteDead remembers ap when err says it timed out or refused the
// connection. Our own deadline or cancellation says nothing about ap, nor
// does a target the policy refused or a proxy that is down.
func (p *Prober) noteDead(ctx context.Context, ap netip.AddrPort, err error) {
	var ne net.Error
	var pe *ProxyError
	if ctx.Err() != nil || errors.As(err, &pe) ||
		!errors.Is(err, syscall.ECONNREFUSED) && !(errors.As(err, &ne) && ne.Timeout()) {
		return
	}
	if j, ok := ctx.Value(jobKey{}).(*jobDead); ok {
		j.mu.Lock()
		j.m[ap] = err
		j.mu.Unlock()
	}
	p.deadMu.Lock()
	p.dead[ap] = deadServer{until: time.Now().Add(p.o.DeadTTL), err: err}
	p.deadMu.Unlock()
}

// deadErr is why ap is skipped, nil when it may be tried.
func (p *Prober) deadErr(ctx context.Context, ap netip.AddrPort) error {
	if j, ok := ctx.Value(jobKey{}).(*jobDead); ok {
		j.mu.Lock()
		err := j.m[ap]
		j.mu.Unlock()
		if err != nil {
			return fmt.Errorf("not tried again: %w", err)
		}
	}
	p.deadMu.Lock()
	d, ok := p.dead[ap]
	p.deadMu.Unlock()
	if ok && time.Now().Before(d.until) {
		return fmt.Errorf("not tried again for %s: %w", p.o.DeadTTL, d.err)
	}
	return nil
}
