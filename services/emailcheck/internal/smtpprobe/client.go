// Package smtpprobe asks mail servers whether they would accept mail for an
// address, without sending any: EHLO, STARTTLS, MAIL FROM, RCPT TO, then
// RSET or QUIT, never DATA. A Prober keeps a few live sessions per server
// and shares them among concurrent checks, so a burst of addresses at one
// domain costs one RCPT TO each instead of a connection each.
package smtpprobe

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// Bounds on what a server may send us.
const (
	maxLineBytes   = 4096 // a longer reply line is a protocol error
	maxReplyLines  = 100
	maxMessageRune = 512 // kept in results
)

// Reply is one SMTP reply.
type Reply struct {
	Code     int
	Enhanced string // RFC 3463 code such as "5.1.1", "" when the server sent none
	Message  string // text lines joined by "\n", enhanced codes removed
	lines    []string
}

func (r Reply) String() string {
	if r.Enhanced != "" {
		return fmt.Sprintf("%d %s %s", r.Code, r.Enhanced, r.Message)
	}
	return fmt.Sprintf("%d %s", r.Code, r.Message)
}

// ReplyError is a reply that stops the conversation: a refused greeting,
// HELO, MAIL FROM or STARTTLS.
type ReplyError struct {
	Cmd   string
	Reply Reply
}

func (e *ReplyError) Error() string {
	return fmt.Sprintf("%s refused: %s", e.Cmd, e.Reply)
}

// Client is one SMTP connection. It is not safe for concurrent use; the
// Prober hands each session to one check at a time.
type Client struct {
	conn    net.Conn
	r       *bufio.Reader
	host    string // the MX host name, for TLS
	timeout time.Duration
	ext     map[string]string // EHLO keywords (upper case) and their parameters

	// TLS is true after a successful STARTTLS. TLSVerifyErr says why the
	// certificate did not verify: mail servers often present self-signed or
	// mismatched certificates, and opportunistic TLS (RFC 7435) goes on
	// regardless, as senders do, so the probe still runs.
	TLS          bool
	TLSVerifyErr error
}

// NewClient reads the greeting of a server on conn. Only a 220 greeting
// is accepted; anything else closes conn.
func NewClient(ctx context.Context, conn net.Conn, host string, bannerTimeout, cmdTimeout time.Duration) (*Client, error) {
	c := &Client{conn: conn, r: bufio.NewReaderSize(conn, maxLineBytes), host: host, timeout: cmdTimeout}
	r, err := c.roundTrip(ctx, bannerTimeout, "")
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("greeting: %w", err)
	}
	if r.Code != 220 {
		conn.Close()
		return nil, &ReplyError{Cmd: "greeting", Reply: r}
	}
	return c, nil
}

// Hello sends EHLO and falls back to HELO when the server does not know it.
func (c *Client) Hello(ctx context.Context, name string) error {
	r, err := c.cmd(ctx, "EHLO "+name)
	if err != nil {
		return err
	}
	if r.Code == 250 {
		c.ext = map[string]string{}
		for _, l := range r.lines[1:] {
			k, v, _ := strings.Cut(l, " ")
			c.ext[strings.ToUpper(k)] = v
		}
		return nil
	}
	if r.Code == 421 {
		return &ReplyError{Cmd: "EHLO", Reply: r}
	}
	c.ext = map[string]string{}
	if r, err = c.cmd(ctx, "HELO "+name); err != nil {
		return err
	}
	if r.Code != 250 {
		return &ReplyError{Cmd: "HELO", Reply: r}
	}
	return nil
}

// Extension reports whether the server announced an EHLO keyword, and its
// parameters.
func (c *Client) Extension(name string) (string, bool) {
	v, ok := c.ext[strings.ToUpper(name)]
	return v, ok
}

// StartTLS upgrades the connection. The certificate is checked against
// roots (nil: the system pool) but a failure is only recorded in
// TLSVerifyErr. Call Hello again afterwards, as RFC 3207 requires.
func (c *Client) StartTLS(ctx context.Context, roots *x509.CertPool) error {
	r, err := c.cmd(ctx, "STARTTLS")
	if err != nil {
		return err
	}
	if r.Code != 220 {
		return &ReplyError{Cmd: "STARTTLS", Reply: r}
	}
	cfg := &tls.Config{
		ServerName:         c.host,
		InsecureSkipVerify: true, // verified below, recorded, not enforced
		VerifyConnection: func(cs tls.ConnectionState) error {
			opts := x509.VerifyOptions{DNSName: c.host, Roots: roots, Intermediates: x509.NewCertPool()}
			for _, ic := range cs.PeerCertificates[1:] {
				opts.Intermediates.AddCert(ic)
			}
			_, c.TLSVerifyErr = cs.PeerCertificates[0].Verify(opts)
			return nil
		},
	}
	tc := tls.Client(c.conn, cfg)
	hctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	if err := tc.HandshakeContext(hctx); err != nil {
		return fmt.Errorf("TLS handshake: %w", err)
	}
	c.conn, c.r, c.TLS = tc, bufio.NewReaderSize(tc, maxLineBytes), true
	return nil
}

// Mail opens a transaction with MAIL FROM. utf8 asks for SMTPUTF8.
func (c *Client) Mail(ctx context.Context, from string, utf8 bool) error {
	line := "MAIL FROM:<" + from + ">"
	if utf8 {
		line += " SMTPUTF8"
	}
	r, err := c.cmd(ctx, line)
	if err != nil {
		return err
	}
	if r.Code != 250 {
		return &ReplyError{Cmd: "MAIL FROM", Reply: r}
	}
	return nil
}

// Rcpt asks whether the server takes mail for to. Any reply is returned;
// only a broken conversation is an error.
func (c *Client) Rcpt(ctx context.Context, to string) (Reply, error) {
	return c.cmd(ctx, "RCPT TO:<"+to+">")
}

// Reset ends the transaction with RSET.
func (c *Client) Reset(ctx context.Context) error {
	r, err := c.cmd(ctx, "RSET")
	if err != nil {
		return err
	}
	if r.Code != 250 {
		return &ReplyError{Cmd: "RSET", Reply: r}
	}
	return nil
}

// Quit says goodbye, waits briefly for the server to hang up (so its
// connection slot is free before ours is reused) and closes.
func (c *Client) Quit(ctx context.Context) {
	if _, err := c.cmd(ctx, "QUIT"); err == nil {
		c.conn.SetReadDeadline(time.Now().Add(min(c.timeout, time.Second)))
		io.Copy(io.Discard, io.LimitReader(c.r, maxLineBytes))
	}
	c.conn.Close()
}

// Close drops the connection without QUIT.
func (c *Client) Close() error { return c.conn.Close() }

func (c *Client) cmd(ctx context.Context, line string) (Reply, error) {
	return c.roundTrip(ctx, c.timeout, line)
}

// roundTrip writes line (unless "") and reads one reply within timeout or
// until ctx ends.
func (c *Client) roundTrip(ctx context.Context, timeout time.Duration, line string) (Reply, error) {
	if strings.ContainsAny(line, "\r\n") {
		return Reply{}, errors.New("smtp: line break in command")
	}
	deadline := time.Now().Add(timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	c.conn.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { c.conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	r, err := c.exchange(line)
	if err != nil && ctx.Err() != nil {
		return r, ctx.Err()
	}
	return r, err
}

func (c *Client) exchange(line string) (Reply, error) {
	if line != "" {
		if _, err := io.WriteString(c.conn, line+"\r\n"); err != nil {
			return Reply{}, err
		}
	}
	var r Reply
	var text []string
	for n := 0; ; n++ {
		if n == maxReplyLines {
			return r, errors.New("smtp: reply has too many lines")
		}
		raw, err := c.r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			return r, errors.New("smtp: reply line too long")
		}
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return r, err
		}
		l := string(bytes.TrimRight(raw, "\r\n"))
		if len(l) < 3 || len(l) > 3 && l[3] != ' ' && l[3] != '-' {
			return r, fmt.Errorf("smtp: malformed reply %q", truncate(l))
		}
		code, err := strconv.Atoi(l[:3])
		if err != nil || code < 100 || code > 599 {
			return r, fmt.Errorf("smtp: malformed reply %q", truncate(l))
		}
		if n > 0 && code != r.Code {
			return r, fmt.Errorf("smtp: reply code changed from %d to %d", r.Code, code)
		}
		r.Code = code
		body := ""
		if len(l) > 4 {
			body = l[4:]
		}
		r.lines = append(r.lines, body)
		if enh, rest, ok := cutEnhanced(code, body); ok {
			if n == 0 {
				r.Enhanced = enh
			}
			body = rest
		}
		text = append(text, body)
		if len(l) == 3 || l[3] == ' ' {
			break
		}
	}
	r.Message = truncate(strings.Join(text, "\n"))
	return r, nil
}

// cutEnhanced splits an RFC 3463 code ("class.subject.detail") from the
// start of a reply line. The class must match the reply's first digit.
func cutEnhanced(code int, s string) (enh, rest string, ok bool) {
	word, rest, _ := strings.Cut(s, " ")
	parts := strings.Split(word, ".")
	if len(parts) != 3 || parts[0] != strconv.Itoa(code/100) || code/100 == 3 || code/100 == 1 {
		return "", s, false
	}
	for _, p := range parts[1:] {
		if len(p) == 0 || len(p) > 3 || strings.Trim(p, "0123456789") != "" {
			return "", s, false
		}
	}
	return word, rest, true
}

func truncate(s string) string {
	if r := []rune(s); len(r) > maxMessageRune {
		return string(r[:maxMessageRune]) + "..."
	}
	return s
}
