package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/surveyor/surveyor/pkg/bus"
	"github.com/surveyor/surveyor/pkg/config"
	"github.com/surveyor/surveyor/pkg/job"
	"github.com/surveyor/surveyor/pkg/netguard"
)

// shared binds every shared declaration, as a binary's settings do.
type shared struct {
	Targets   netguard.Policy
	DNSServer string
	CacheTTL  time.Duration
	Dir       string
}

func (c *shared) Register(s *config.Set) {
	TargetsVar(s, &c.Targets)
	DNSServerVar(s, &c.DNSServer)
	CacheTTLVar(s, &c.CacheTTL)
	FingerprintsDirVar(s, &c.Dir)
}

func TestSharedDefaults(t *testing.T) {
	var sh shared
	c, err := Load(config.Map(nil), &sh)
	if err != nil {
		t.Fatal(err)
	}
	if c.NATSURL != "nats://127.0.0.1:4222" || c.Bus.Replicas != 1 || c.Bus.ResultTTL != 168*time.Hour ||
		c.Bus.JobsMaxMsgs != 1_000_000 || c.Bus.JobsMaxBytes != 1<<30 || c.LogLevel != slog.LevelInfo {
		t.Errorf("Common defaults %+v", c)
	}
	if sh.Targets != netguard.PublicOnly || sh.DNSServer != "" || sh.CacheTTL != 24*time.Hour || sh.Dir != "" {
		t.Errorf("shared defaults %+v", sh)
	}
	c, err = Load(config.Map(map[string]string{
		"LOG_LEVEL": "DEBUG", "ALLOW_PRIVATE_TARGETS": "true", "DNS_SERVER": "127.0.0.1:5353", "STREAM_REPLICAS": "3",
	}), &sh)
	if err != nil || c.LogLevel != slog.LevelDebug || sh.Targets != netguard.AllowPrivate ||
		sh.DNSServer != "127.0.0.1:5353" || c.Bus.Replicas != 3 {
		t.Errorf("got %+v %+v, %v", c, sh, err)
	}
	_, err = Load(config.Map(map[string]string{"ALLOW_PRIVATE_TARGETS": "127.0.0.2/32, 10.20.0.0/16"}), &sh)
	if err != nil || sh.Targets.String() != "127.0.0.2/32,10.20.0.0/16" ||
		!sh.Targets.Allows(netip.MustParseAddr("10.20.3.4")) || sh.Targets.Allows(netip.MustParseAddr("127.0.0.1")) {
		t.Errorf("list: %v, %v", sh.Targets, err)
	}
}

// A bad value of any shared variable is named in the error that stops the
// binary.
func TestSharedErrorsNameTheVariable(t *testing.T) {
	bad := map[string]string{
		"STREAM_REPLICAS": "7", "RESULT_TTL": "forever", "JOBS_MAX_MSGS": "0", "JOBS_MAX_BYTES": "1k",
		"LOG_LEVEL": "verbose", "ALLOW_PRIVATE_TARGETS": "10.0.0.0/8,10.300.0.0/16", "DNS_SERVER": "127.0.0.1", "CACHE_TTL": "-1h",
	}
	_, err := Load(config.Map(bad), &shared{})
	if err == nil {
		t.Fatal("bad values accepted")
	}
	for name := range bad {
		if !strings.Contains(err.Error(), name+":") {
			t.Errorf("error does not name %s: %v", name, err)
		}
	}
	if !strings.Contains(err.Error(), `"10.300.0.0/16"`) {
		t.Errorf("error does not name the bad entry of ALLOW_PRIVATE_TARGETS: %v", err)
	}
}

func testWorker(own config.Component) Worker {
	return Worker{Kind: job.Scan, ConcurrencyVar: "TEST_CONCURRENCY", DefaultConcurrency: 7,
		DefaultAdminAddr: "127.0.0.1:9199", Settings: own}
}

func TestWorkerSettings(t *testing.T) {
	w := testWorker(&shared{})
	_, rt, err := w.Load(config.Map(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := Runtime{AdminAddr: "127.0.0.1:9199", Concurrency: 7, AckWait: 30 * time.Second, MaxDeliver: 5, Grace: 20 * time.Second}
	if rt != want {
		t.Errorf("runtime defaults %+v, want %+v", rt, want)
	}
	_, _, err = w.Load(config.Map(map[string]string{"TEST_CONCURRENCY": "0", "WORKER_GRACE": "x", "NATS_URL": "nats://h:1"}))
	for _, name := range []string{"TEST_CONCURRENCY", "WORKER_GRACE"} {
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("error %v does not name %s", err, name)
		}
	}

	d := w.Describe()
	if d.Listen != "ADMIN_ADDR" || d.Worker == nil || d.Worker.Consumer != bus.ConsumerName(job.Scan) ||
		d.Worker.Concurrency != "TEST_CONCURRENCY" || d.Worker.MaxAckPending != consumerMaxAckPending {
		t.Errorf("description %+v %+v", d, d.Worker)
	}
	defaults := map[string]string{}
	for _, v := range d.Variables {
		defaults[v.Name] = v.Default
	}
	for name, def := range map[string]string{
		"NATS_URL": "nats://127.0.0.1:4222", "TEST_CONCURRENCY": "7", "WORKER_GRACE": "20s",
		"ALLOW_PRIVATE_TARGETS": "false", "CACHE_TTL": "24h", "RESULT_TTL": "168h", "LOG_LEVEL": "info",
	} {
		if got, ok := defaults[name]; !ok || got != def {
			t.Errorf("%s: described default %q (declared %v), want %q", name, got, ok, def)
		}
	}
}

func freePort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// A process that starts before NATS waits for it, is not ready meanwhile,
// and sets up the streams once the server is up.
func TestSetUpWaitsForJetStream(t *testing.T) {
	url := fmt.Sprintf("nats://127.0.0.1:%d", freePort(t))
	p := &Process{Name: "test", Common: Common{NATSURL: url, Bus: bus.Config{ResultTTL: time.Hour}},
		Log: slog.New(slog.DiscardHandler)}
	c, err := p.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer c.NC.Close()
	done := make(chan error, 1)
	go func() { done <- c.SetUp(context.Background(), p.Common.Bus, p.Log) }()

	time.Sleep(1500 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("SetUp returned %v before NATS was up", err)
	default:
	}
	if c.Ready() == nil {
		t.Fatal("ready before NATS was up")
	}
	srv, err := bus.StartEmbedded(url, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("SetUp did not finish once NATS was up")
	}
	if c.Jobs == nil {
		t.Fatal("no job store after SetUp")
	}
	if _, err := c.JS.Stream(context.Background(), "JOBS"); err != nil {
		t.Errorf("JOBS not declared: %v", err)
	}
	if err := c.Ready(); err == nil || !strings.Contains(err.Error(), "not set up") {
		t.Errorf("ready before SetReady: %v", err)
	}
	c.SetReady()
	if err := c.Ready(); err != nil {
		t.Errorf("not ready after SetReady: %v", err)
	}
}

// SetUp gives up when the process is stopped before NATS is reachable.
func TestSetUpStopsWithContext(t *testing.T) {
	p := &Process{Name: "test", Common: Common{NATSURL: fmt.Sprintf("nats://127.0.0.1:%d", freePort(t))},
		Log: slog.New(slog.DiscardHandler)}
	c, err := p.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer c.NC.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := c.SetUp(ctx, p.Common.Bus, p.Log); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("SetUp = %v, want the context's error", err)
	}
}
