package testservers

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// SOCKS5 is a small SOCKS5 proxy (RFC 1928, CONNECT only, RFC 1929
// user/password when the test sets one) that counts its clients and
// records what they ask it to connect to.
type SOCKS5 struct {
	Addr  string       // host:port of the proxy
	Conns atomic.Int64 // client connections accepted

	user, pass string
	ln         net.Listener
	mu         sync.Mutex
	targets    []string // CONNECT destinations as sent: IP:port, or name:port
	open       []net.Conn
}

// StartSOCKS5 serves on loopback until the test ends. An empty user
// means no authentication.
func StartSOCKS5(t testing.TB, user, pass string) *SOCKS5 {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &SOCKS5{Addr: ln.Addr().String(), user: user, pass: pass, ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.Conns.Add(1)
			s.track(c)
			go s.serve(c)
		}
	}()
	t.Cleanup(s.Stop)
	return s
}

// Stop closes the listener and every connection, like a proxy that died.
func (s *SOCKS5) Stop() {
	s.ln.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.open {
		c.Close()
	}
}

// Targets is what clients asked the proxy to connect to.
func (s *SOCKS5) Targets() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.targets...)
}

func (s *SOCKS5) track(c net.Conn) {
	s.mu.Lock()
	s.open = append(s.open, c)
	s.mu.Unlock()
}

func (s *SOCKS5) serve(c net.Conn) {
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(c)
	target, ok := s.handshake(r, c)
	if !ok {
		return
	}
	s.mu.Lock()
	s.targets = append(s.targets, target)
	s.mu.Unlock()
	up, err := net.DialTimeout("tcp", target, 2*time.Second)
	if err != nil {
		c.Write([]byte{5, 5, 0, 1, 0, 0, 0, 0, 0, 0}) // connection refused
		return
	}
	s.track(up)
	defer up.Close()
	if _, err := c.Write([]byte{5, 0, 0, 1, 0, 0, 0, 0, 0, 0}); err != nil {
		return
	}
	c.SetDeadline(time.Time{})
	done := make(chan struct{}, 2)
	go func() { io.Copy(up, r); up.(*net.TCPConn).CloseWrite(); done <- struct{}{} }()
	go func() { io.Copy(c, up); c.(*net.TCPConn).CloseWrite(); done <- struct{}{} }()
	<-done
	<-done
}

// handshake reads the greeting, authenticates and reads the CONNECT
// request, returning its destination.
func (s *SOCKS5) handshake(r *bufio.Reader, w io.Writer) (string, bool) {
	head := make([]byte, 2)
	if _, err := io.ReadFull(r, head); err != nil || head[0] != 5 {
		return "", false
	}
	methods := make([]byte, head[1])
	if _, err := io.ReadFull(r, methods); err != nil {
		return "", false
	}
	want := byte(0) // no authentication
	if s.user != "" {
		want = 2 // user/password
	}
	offered := false
	for _, m := range methods {
		offered = offered || m == want
	}
	if !offered {
		w.Write([]byte{5, 0xff})
		return "", false
	}
	w.Write([]byte{5, want})
	if want == 2 {
		user, pass, ok := readUserPass(r)
		if !ok || user != s.user || pass != s.pass {
			w.Write([]byte{1, 1})
			return "", false
		}
		w.Write([]byte{1, 0})
	}
	req := make([]byte, 4)
	if _, err := io.ReadFull(r, req); err != nil || req[0] != 5 || req[1] != 1 {
		w.Write([]byte{5, 7, 0, 1, 0, 0, 0, 0, 0, 0}) // command not supported
		return "", false
	}
	var host string
	switch req[3] {
	case 1, 4:
		b := make([]byte, map[byte]int{1: 4, 4: 16}[req[3]])
		if _, err := io.ReadFull(r, b); err != nil {
			return "", false
		}
		a, _ := netip.AddrFromSlice(b)
		host = a.String()
	case 3:
		n, err := r.ReadByte()
		if err != nil {
			return "", false
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(r, b); err != nil {
			return "", false
		}
		host = string(b)
	default:
		return "", false
	}
	port := make([]byte, 2)
	if _, err := io.ReadFull(r, port); err != nil {
		return "", false
	}
	return net.JoinHostPort(host, strconv.Itoa(int(binary.BigEndian.Uint16(port)))), true
}

// readUserPass reads an RFC 1929 request.
func readUserPass(r *bufio.Reader) (user, pass string, ok bool) {
	field := func() (string, bool) {
		n, err := r.ReadByte()
		if err != nil {
			return "", false
		}
		b := make([]byte, n)
		_, err = io.ReadFull(r, b)
		return string(b), err == nil
	}
	if v, err := r.ReadByte(); err != nil || v != 1 {
		return "", "", false
	}
	if user, ok = field(); !ok {
		return "", "", false
	}
	pass, ok = field()
	return user, pass, ok
}
