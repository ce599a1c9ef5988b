package smtpprobe

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"
)

// TestClientBoundsReplies feeds the client greetings no honest server
// sends and checks it stops instead of reading without end.
func TestClientBoundsReplies(t *testing.T) {
	cases := []struct{ name, greeting, want string }{
		{"long line", "220 " + strings.Repeat("a", 5000) + "\r\n", "too long"},
		{"endless reply", strings.Repeat("220-more\r\n", 200), "too many lines"},
		{"not a code", "hello there\r\n", "malformed"},
		{"code changes", "220-first\r\n250 second\r\n", "code changed"},
		{"not 220", "554 5.7.1 go away\r\n", "greeting refused"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			go func() {
				conn, err := ln.Accept()
				if err != nil {
					return
				}
				defer conn.Close()
				conn.Write([]byte(c.greeting))
				time.Sleep(time.Second)
			}()
			conn, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			_, err = NewClient(context.Background(), conn, "mx.test", 2*time.Second, time.Second)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
		})
	}
}

func TestEnhancedCodeParsing(t *testing.T) {
	cases := []struct {
		code      int
		line      string
		enh, rest string
	}{
		{550, "5.1.1 no such user", "5.1.1", "no such user"},
		{250, "2.1.5 Ok", "2.1.5", "Ok"},
		{550, "4.1.1 class mismatch", "", "4.1.1 class mismatch"},
		{550, "no code here", "", "no code here"},
		{452, "4.5.3", "4.5.3", ""},
		{550, "5.1234.1 too long", "", "5.1234.1 too long"},
	}
	for _, c := range cases {
		enh, rest, _ := cutEnhanced(c.code, c.line)
		if enh != c.enh || rest != c.rest {
			t.Errorf("cutEnhanced(%d, %q) = %q, %q", c.code, c.line, enh, rest)
		}
	}
}
