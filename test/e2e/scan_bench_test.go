package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

const (
	benchPages   = 200
	benchLatency = 10 * time.Millisecond
	roundLimit   = 2 * time.Minute // a round that takes longer has lost jobs
)

// BenchmarkScanEndToEnd is issue 4's benchmark: 200 local pages that each
// answer after 10 ms, POSTed to /v1/scan of a real bin/ingest (embedded
// JetStream) and scanned by a real bin/scanner, timed from the first POST
// to the last result on results.scan.*. One scanner runs at its default
// concurrency, then one at SCANNER_CONCURRENCY=1, in the same run. Reported:
// scans/s of both, their ratio (target >= 10) and the scanner's peak
// resident memory, VmHWM (target < 200 MB).
func BenchmarkScanEndToEnd(b *testing.B) {
	bin := os.Getenv("SURVEYOR_BIN")
	if bin == "" {
		b.Skip("SURVEYOR_BIN is not set; make bench builds the binaries and sets it")
	}
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(benchLatency)
		servePage(w, r)
	}))
	defer site.Close()
	urls := make([]string, benchPages)
	for i := range urls {
		urls[i] = fmt.Sprintf("%s/shop/item-%d", site.URL, i)
	}

	ing := startIngest(b, bin)
	results := subscribeResults(b, ing.natsURL)

	var parallel, serial, scannerCPU, ingestCPU, harnessCPU time.Duration
	var peakRSS, concurrency float64
	for b.Loop() {
		for _, c := range []string{"", "1"} { // "": the default
			sc := startScanner(b, bin, ing.natsURL, c)
			// A warm-up scan: the consumer exists, the engine is built and
			// the first connection is made before the clock starts.
			round(b, ing, results, urls[:1])
			cpuS, cpuI, cpuH := sc.cpu(b), ing.cpu(b), selfCPU()
			took := round(b, ing, results, urls)
			if c == "" {
				parallel += took
				concurrency = float64(sc.concurrency)
				scannerCPU += sc.cpu(b) - cpuS
				ingestCPU += ing.cpu(b) - cpuI
				harnessCPU += selfCPU() - cpuH
			} else {
				serial += took
			}
			peakRSS = max(peakRSS, sc.peakRSS(b))
			sc.stop(b)
		}
	}
	n := float64(b.N * benchPages)
	b.ReportMetric(n/parallel.Seconds(), "scans/s")
	b.ReportMetric(n/serial.Seconds(), "scans/s-c1")
	b.ReportMetric(serial.Seconds()/parallel.Seconds(), "ratio-vs-c1")
	b.ReportMetric(peakRSS, "scanner-peak-RSS-MB")
	b.ReportMetric(concurrency, "concurrency")
	// CPU per scan of each process: the parallel rate is bounded by the
	// machine's cores, which the harness (web site, clients, subscriber)
	// shares with the system it measures; these say who used them.
	b.ReportMetric(float64(scannerCPU.Microseconds())/n, "scanner-CPU-us/scan")
	b.ReportMetric(float64(ingestCPU.Microseconds())/n, "ingest+nats-CPU-us/scan")
	b.ReportMetric(float64(harnessCPU.Microseconds())/n, "harness-CPU-us/scan")
}

// round POSTs every URL (force: a new job each time) from a few clients at
// once and waits until each job's result has been published.
func round(b *testing.B, ing *ingest, results <-chan result, urls []string) time.Duration {
	b.Helper()
	start := time.Now()
	ids := make(chan string, len(urls))
	var wg sync.WaitGroup
	var next sync.Mutex
	i := 0
	for range 8 {
		wg.Go(func() {
			for {
				next.Lock()
				n := i
				i++
				next.Unlock()
				if n >= len(urls) {
					return
				}
				ids <- ing.scan(b, urls[n])
			}
		})
	}
	wg.Wait()
	close(ids)
	if b.Failed() {
		b.FailNow() // a POST failed; its result will never come
	}
	want := map[string]bool{}
	for id := range ids {
		want[id] = true
	}
	deadline := time.After(roundLimit)
	for len(want) > 0 {
		select {
		case r := <-results:
			if !want[r.ID] {
				continue // a result of an earlier round, or the warm-up
			}
			if r.Status != "completed" {
				b.Fatalf("scan %s %s: %s", r.ID, r.Status, r.Error)
			}
			delete(want, r.ID)
		case <-deadline:
			b.Fatalf("%d of %d results missing after %s", len(want), len(urls), roundLimit)
		}
	}
	return time.Since(start)
}

type result struct {
	ID     string `json:"scan_id"`
	Status string `json:"status"`
	Error  string `json:"error"`
}

// subscribeResults listens on results.scan.* as another system would.
func subscribeResults(b *testing.B, url string) <-chan result {
	nc, err := nats.Connect(url)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(nc.Close)
	out := make(chan result, 4*benchPages)
	_, err = nc.Subscribe("results.scan.*", func(m *nats.Msg) {
		var r result
		if json.Unmarshal(m.Data, &r) == nil {
			out <- r
		}
	})
	if err == nil {
		err = nc.Flush()
	}
	if err != nil {
		b.Fatal(err)
	}
	return out
}

// ingest is a running bin/ingest with its embedded JetStream.
type ingest struct {
	*process
	api     string
	natsURL string
	client  *http.Client
}

var (
	apiLine  = regexp.MustCompile(`listening on (http://[0-9.:]+)`)
	natsLine = regexp.MustCompile(`"msg":"embedded NATS listening".*"url":"(nats://[0-9.:]+)"`)
)

func startIngest(b *testing.B, bin string) *ingest {
	p := start(b, filepath.Join(bin, "ingest"), map[string]string{
		"EMBEDDED_NATS":         "true",
		"NATS_URL":              "nats://127.0.0.1:0",
		"DATA_DIR":              b.TempDir(),
		"HTTP_ADDR":             "127.0.0.1:0",
		"ALLOW_PRIVATE_TARGETS": "true",
	})
	api := p.await(b, apiLine)
	natsURL := p.await(b, natsLine)
	return &ingest{process: p, api: api, natsURL: natsURL, client: &http.Client{Timeout: 10 * time.Second}}
}

func (g *ingest) scan(b *testing.B, url string) string {
	body, _ := json.Marshal(map[string]any{"url": url, "force": true})
	res, err := g.client.Post(g.api+"/v1/scan", "application/json", bytes.NewReader(body))
	if err != nil {
		b.Error(err)
		return ""
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	var launch struct {
		ID string `json:"scan_id"`
	}
	if res.StatusCode != http.StatusOK || json.Unmarshal(data, &launch) != nil {
		b.Errorf("POST /v1/scan %s: %d %s", url, res.StatusCode, data)
	}
	return launch.ID
}

// scanner is a running bin/scanner.
type scanner struct {
	*process
	concurrency int
}

var startedLine = regexp.MustCompile(`"msg":"worker started".*"concurrency":([0-9]+)`)

// startScanner runs bin/scanner; concurrency "" keeps its default.
func startScanner(b *testing.B, bin, natsURL, concurrency string) *scanner {
	env := map[string]string{
		"NATS_URL":              natsURL,
		"ADMIN_ADDR":            "127.0.0.1:0",
		"ALLOW_PRIVATE_TARGETS": "true",
	}
	if concurrency != "" {
		env["SCANNER_CONCURRENCY"] = concurrency
	}
	p := start(b, filepath.Join(bin, "scanner"), env)
	n, _ := strconv.Atoi(p.await(b, startedLine))
	return &scanner{process: p, concurrency: n}
}

// peakRSS is the process's high-water resident set, in MB.
func (p *process) peakRSS(b *testing.B) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		b.Fatal(err)
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			if err != nil {
				b.Fatalf("VmHWM %q", rest)
			}
			return float64(kb) / 1024
		}
	}
	b.Fatal("no VmHWM in /proc status")
	return 0
}

// cpu is the user and system time the process has used so far, from
// fields 14 and 15 of /proc/<pid>/stat (after the parenthesized name).
func (p *process) cpu(b *testing.B) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		b.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(data), ") ")
	f := strings.Fields(rest)
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / clockTicks
}

// selfCPU is the user and system time this test process has used so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat times: 100 on every
// Linux architecture Go supports.
const clockTicks = 100

// process is a child whose stderr is kept in a file and searched for the
// lines that say where it listens.
type process struct {
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

func start(b *testing.B, path string, env map[string]string) *process {
	b.Helper()
	log, err := os.CreateTemp(b.TempDir(), filepath.Base(path)+"-*.log")
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(path)
	cmd.Env = os.Environ()
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	p := &process{cmd: cmd, log: log.Name(), done: make(chan struct{})}
	go func() { cmd.Wait(); log.Close(); close(p.done) }()
	b.Cleanup(func() { p.stop(b) })
	return p
}

// await waits for a line of the log that re matches and returns the
// match's first group.
func (p *process) await(b *testing.B, re *regexp.Regexp) string {
	b.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		f, err := os.Open(p.log)
		if err != nil {
			b.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				f.Close()
				return m[1]
			}
		}
		f.Close()
		select {
		case <-p.done:
			out, _ := os.ReadFile(p.log)
			b.Fatalf("%s exited:\n%s", p.cmd.Path, out)
		case <-time.After(50 * time.Millisecond):
		}
	}
	out, _ := os.ReadFile(p.log)
	b.Fatalf("%s: no line matching %s:\n%s", p.cmd.Path, re, out)
	return ""
}

// stop sends SIGTERM and waits; a process that ignores it is killed.
func (p *process) stop(b *testing.B) {
	select {
	case <-p.done:
		return
	default:
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		b.Logf("%s did not stop on SIGTERM; killing it", p.cmd.Path)
		p.cmd.Process.Kill()
		<-p.done
	}
}

// servePage answers like a small WordPress shop behind nginx: about 40 KB
// of markup with the asset paths, generator tags and headers the software
// really emits, titled after the path so every page differs. The markup is
// built once and each page goes out in one write with its length: the
// harness shares the machine with what it measures, so it should spend its
// CPU time on nothing but waiting (written in pieces, chunked, a page cost
// the harness a dozen system calls).
func servePage(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Server", "nginx/1.24.0")
	h.Set("X-Powered-By", "PHP/8.2.12")
	h.Set("Content-Type", "text/html; charset=UTF-8")
	h.Set("Link", `<http://shop.example/wp-json/>; rel="https://api.w.org/"`)
	buf := pageBufs.Get().(*[]byte)
	page := append(append(append((*buf)[:0], pageHead...), html.EscapeString(r.URL.Path)...), pageBody...)
	h.Set("Content-Length", strconv.Itoa(len(page)))
	w.Write(page)
	*buf = page
	pageBufs.Put(buf)
}

var pageBufs = sync.Pool{New: func() any { return new([]byte) }}

const pageHead = `<!DOCTYPE html><html lang="en-US"><head><meta charset="UTF-8"><title>`

var pageBody = func() string {
	var sb strings.Builder
	sb.WriteString(` – Example Shop</title>
<meta name="generator" content="WordPress 6.4.3">
<meta name="generator" content="WooCommerce 8.5.2">
<link rel="stylesheet" href="/wp-content/plugins/woocommerce/assets/css/woocommerce.css?ver=8.5.2">
<link rel="stylesheet" href="/wp-content/themes/storefront/style.css?ver=4.5.3">
<script src="/wp-includes/js/jquery/jquery.min.js?ver=3.7.1"></script>
<script src="/wp-content/plugins/woocommerce/assets/js/frontend/woocommerce.min.js?ver=8.5.2"></script>
<script async src="https://www.googletagmanager.com/gtag/js?id=G-ABC123XYZ"></script>
<script>window.dataLayer = window.dataLayer || []; function gtag(){dataLayer.push(arguments);} gtag('js', new Date()); gtag('config', 'G-ABC123XYZ');</script>
</head><body class="home page-template woocommerce-js"><div id="page" class="site">
<header class="site-header"><nav class="main-navigation"><ul>`)
	for i := range 30 {
		fmt.Fprintf(&sb, `<li class="menu-item"><a href="/category/c%d/">Category %d</a></li>`, i, i)
	}
	sb.WriteString(`</ul></nav></header><main class="site-main"><ul class="products columns-4">`)
	for i := range 120 {
		fmt.Fprintf(&sb, `<li class="product type-product"><a href="/product/p%[1]d/" class="woocommerce-LoopProduct-link"><img src="/wp-content/uploads/2024/01/p%[1]d-300x300.jpg" width="300" height="300" alt="Product %[1]d" loading="lazy"><h2 class="woocommerce-loop-product__title">Product %[1]d</h2><span class="price"><bdi>%[1]d.99&nbsp;€</bdi></span></a></li>`+"\n", i)
	}
	sb.WriteString(`</ul></main><footer class="site-footer"><p>Contact: shop@example.com</p></footer></div>
<script src="/wp-content/themes/storefront/assets/js/navigation.min.js?ver=4.5.3"></script></body></html>`)
	return sb.String()
}()
