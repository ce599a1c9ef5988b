package bus

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// Embedded is a JetStream server inside the process, for one machine and
// for tests. Clients in the same process should connect through InProcess,
// which skips the loopback TCP stack.
type Embedded struct {
	Server *server.Server
}

// StartEmbedded starts a JetStream server with file storage in dataDir,
// listening on the host and port of listenURL (the first of NATS_URL). A
// port of 0 picks a free one, which tests use.
func StartEmbedded(listenURL, dataDir string) (*Embedded, error) {
	host, port, err := hostPort(listenURL)
	if err != nil {
		return nil, err
	}
	opts := &server.Options{
		ServerName: "surveyor-embedded",
		Host:       host,
		Port:       port,
		JetStream:  true,
		StoreDir:   dataDir,
		MaxPayload: MaxPayload,
		NoSigs:     true,
		NoLog:      true,
	}
	s, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("embedded nats: %w", err)
	}
	s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		s.Shutdown()
		return nil, fmt.Errorf("embedded nats: not ready on %s:%d", host, port)
	}
	return &Embedded{Server: s}, nil
}

// ClientURL is the address other processes connect to.
func (e *Embedded) ClientURL() string { return e.Server.ClientURL() }

// InProcess is the connect option for a client living in this process.
func (e *Embedded) InProcess() nats.Option { return nats.InProcessServer(e.Server) }

// Shutdown stops the server and waits until it has flushed its storage.
func (e *Embedded) Shutdown() {
	e.Server.Shutdown()
	e.Server.WaitForShutdown()
}

func hostPort(raw string) (string, int, error) {
	first := strings.TrimSpace(strings.Split(raw, ",")[0])
	u, err := url.Parse(first)
	if err != nil || u.Host == "" {
		return "", 0, fmt.Errorf("NATS_URL: %q is not a nats://host:port URL", first)
	}
	host, p, err := net.SplitHostPort(u.Host)
	if err != nil {
		return u.Hostname(), 4222, nil
	}
	port, err := strconv.Atoi(p)
	if err != nil {
		return "", 0, fmt.Errorf("NATS_URL: bad port %q", p)
	}
	if port == 0 {
		port = server.RANDOM_PORT
	}
	return host, port, nil
}
