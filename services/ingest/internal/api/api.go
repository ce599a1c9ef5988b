// Package api is ingest's HTTP surface on fasthttp: the /v1 job endpoints,
// health, metrics and the OpenAPI document. Handlers validate, hand the
// work to intake, and answer; every error is problem+json.
package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"mime"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/surveyor/surveyor/pkg/job"
	"github.com/surveyor/surveyor/pkg/jobstore"
	"github.com/surveyor/surveyor/pkg/netguard"
	"github.com/surveyor/surveyor/pkg/obs"
	"github.com/surveyor/surveyor/pkg/sitemap"
	"github.com/surveyor/surveyor/services/ingest/internal/intake"
	"github.com/surveyor/surveyor/services/ingest/internal/problem"
	"github.com/surveyor/surveyor/services/ingest/internal/validate"
)

// MaxBody is the largest request body (contract §3).
const MaxBody = 1 << 20

// Jobs is what the API needs from intake.
type Jobs interface {
	Submit(ctx context.Context, reqs []job.Request) ([]intake.Outcome, int, error)
	Get(ctx context.Context, k job.Kind, id string) (*job.Job, error)
}

// API serves ingest's routes.
type API struct {
	Jobs    Jobs
	Targets netguard.Policy // which IP literals a target URL may name
	// Ready reports whether NATS is connected and the streams exist.
	Ready func() error
	// Limit, when set, decides whether a request may proceed (rate limit).
	Limit func(ctx *fasthttp.RequestCtx) bool
	// Technologies serves the /technologies area when set.
	Technologies fasthttp.RequestHandler
}

var (
	httpRequests = obs.Default.NewCounterVec("surveyor_http_requests_total",
		"HTTP requests answered by ingest, by route and status.", "route", "status")
	httpSeconds = obs.Default.NewHistogramVec("surveyor_http_request_duration_seconds",
		"Time to answer an HTTP request, by route.", obs.DurationBuckets, "route")
)

// route is one entry of the routing table.
type route struct {
	name   string // metric label and OpenAPI path
	method string
	serve  func(a *API, ctx *fasthttp.RequestCtx, id string)
}

// Handler is the fasthttp entry point.
func (a *API) Handler(ctx *fasthttp.RequestCtx) {
	start := time.Now()
	name := a.dispatch(ctx)
	httpRequests.With(name, statusLabel(ctx.Response.StatusCode())).Inc()
	httpSeconds.With(name).Observe(time.Since(start).Seconds())
}

// Server is the HTTP server of a, with the limits and timeouts ingest runs
// with. The intake benchmark's bare baseline uses it too, so the two differ
// only in what storing a job costs.
func (a *API) Server() *fasthttp.Server {
	return &fasthttp.Server{
		Handler:            a.Handler,
		ErrorHandler:       ErrorHandler,
		Name:               "surveyor",
		MaxRequestBodySize: MaxBody,
		ReadTimeout:        10 * time.Second,
		WriteTimeout:       10 * time.Second,
		IdleTimeout:        60 * time.Second,
	}
}

// ErrorHandler answers requests fasthttp could not read (413 for bodies
// over the limit) in the API's own format.
func ErrorHandler(ctx *fasthttp.RequestCtx, err error) {
	if errors.Is(err, fasthttp.ErrBodyTooLarge) {
		problem.Write(ctx, fasthttp.StatusRequestEntityTooLarge, "request body is larger than 1 MiB")
		return
	}
	problem.Write(ctx, fasthttp.StatusBadRequest, "cannot read the request")
}

func (a *API) dispatch(ctx *fasthttp.RequestCtx) string {
	path := string(ctx.Path())
	if strings.HasPrefix(path, "/technologies") && a.Technologies != nil {
		a.Technologies(ctx)
		return "/technologies"
	}
	routes, id := match(path)
	if routes == nil {
		problem.Write(ctx, fasthttp.StatusNotFound, "no such path")
		return "unknown"
	}
	method := string(ctx.Method())
	if method == fasthttp.MethodHead {
		method = fasthttp.MethodGet
	}
	for _, rt := range routes {
		if rt.method == method {
			if rt.method == fasthttp.MethodPost && a.Limit != nil && !a.Limit(ctx) {
				problem.Write(ctx, fasthttp.StatusTooManyRequests, "rate limit exceeded for this client")
				return rt.name
			}
			rt.serve(a, ctx, id)
			return rt.name
		}
	}
	allow := make([]string, 0, 2)
	for _, rt := range routes {
		allow = append(allow, rt.method)
		if rt.method == fasthttp.MethodGet {
			allow = append(allow, fasthttp.MethodHead)
		}
	}
	problem.Write(ctx, fasthttp.StatusMethodNotAllowed, "method "+string(ctx.Method())+" is not allowed here")
	ctx.Response.Header.Set("Allow", strings.Join(allow, ", "))
	return routes[0].name
}

// match finds the routes of a path and the job id it carries, if any.
func match(path string) ([]route, string) {
	if rs, ok := static[path]; ok {
		return rs, ""
	}
	for _, p := range withID {
		rest, ok := strings.CutPrefix(path, p.prefix)
		if !ok {
			continue
		}
		id, tail, _ := strings.Cut(rest, "/")
		if id == "" {
			continue
		}
		if tail == "" && !strings.HasSuffix(rest, "/") {
			return p.routes, id
		}
		if p.sub != nil && tail == p.subName {
			return p.sub, id
		}
	}
	return nil, ""
}

func post(name string, e validate.Endpoint) []route {
	return []route{{name: name, method: fasthttp.MethodPost, serve: func(a *API, ctx *fasthttp.RequestCtx, _ string) { a.launch(ctx, e) }}}
}

func get(name string, serve func(a *API, ctx *fasthttp.RequestCtx, id string)) []route {
	return []route{{name: name, method: fasthttp.MethodGet, serve: serve}}
}

var static = map[string][]route{
	"/v1/scans":           post("/v1/scans", validate.ScanMany),
	"/v1/scan":            post("/v1/scan", validate.ScanOne),
	"/v1/sitemap":         post("/v1/sitemap", validate.SitemapOne),
	"/v1/emails/validate": post("/v1/emails/validate", validate.EmailMany),
	"/v1/email/validate":  post("/v1/email/validate", validate.EmailOne),
	"/healthz":            get("/healthz", func(a *API, ctx *fasthttp.RequestCtx, _ string) { writeJSON(ctx, map[string]string{"status": "ok"}) }),
	"/readyz":             get("/readyz", (*API).readyz),
	"/metrics":            get("/metrics", (*API).metrics),
	"/openapi.json":       get("/openapi.json", (*API).openapi),
}

type idRoute struct {
	prefix  string
	routes  []route
	subName string
	sub     []route
}

var withID = []idRoute{
	{prefix: "/v1/scan/", routes: get("/v1/scan/{scan_id}", jobGetter(job.Scan))},
	{prefix: "/v1/sitemap/", routes: get("/v1/sitemap/{sitemap_id}", jobGetter(job.Sitemap)),
		subName: "sitemap.xml", sub: get("/v1/sitemap/{sitemap_id}/sitemap.xml", (*API).sitemapXML)},
	{prefix: "/v1/email/validate/", routes: get("/v1/email/validate/{job_id}", jobGetter(job.Email))},
}

// launch serves the five POSTs.
func (a *API) launch(ctx *fasthttp.RequestCtx, e validate.Endpoint) {
	if !isJSON(ctx.Request.Header.ContentType()) {
		problem.Write(ctx, fasthttp.StatusUnsupportedMediaType, "Content-Type must be application/json")
		return
	}
	reqs, errs := validate.Decode(e, ctx.PostBody(), a.Targets)
	if len(errs) == 1 && errs[0].Field == "" {
		problem.Write(ctx, fasthttp.StatusBadRequest, errs[0].Message)
		return
	}
	if len(errs) > 0 {
		problem.Write(ctx, fasthttp.StatusBadRequest, "the request has invalid fields", errs...)
		return
	}
	// fasthttp's RequestCtx is recycled after the handler returns, so it is
	// not used as a context; intake bounds its own waits.
	outs, eta, err := a.Jobs.Submit(context.Background(), reqs)
	switch {
	case errors.Is(err, intake.ErrQueueFull):
		problem.Write(ctx, fasthttp.StatusTooManyRequests, "the job queue is full; try again shortly")
		return
	case errors.Is(err, intake.ErrUnavailable):
		problem.Write(ctx, fasthttp.StatusServiceUnavailable, "the message bus is unavailable; nothing was stored")
		return
	case err != nil:
		problem.Write(ctx, fasthttp.StatusInternalServerError, "internal error")
		return
	}
	writeJSON(ctx, launchResponse(e, reqs, outs, eta))
}

func jobGetter(k job.Kind) func(a *API, ctx *fasthttp.RequestCtx, id string) {
	return func(a *API, ctx *fasthttp.RequestCtx, id string) {
		if j := a.lookup(ctx, k, id); j != nil {
			// The document's own encoder: json.Marshal would check and
			// compact its output, result included, once more.
			ctx.SetContentType("application/json")
			ctx.Response.SetBodyRaw(j.AppendJSON(nil))
		}
	}
}

// lookup fetches a job of kind k, answering the error itself when it fails.
func (a *API) lookup(ctx *fasthttp.RequestCtx, k job.Kind, id string) *job.Job {
	gctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	j, err := a.Jobs.Get(gctx, k, id)
	switch {
	case errors.Is(err, jobstore.ErrNotFound) || (err == nil && j.Kind != k):
		problem.Write(ctx, fasthttp.StatusNotFound, "no "+string(k)+" job with id "+id)
		return nil
	case errors.Is(err, intake.ErrUnavailable):
		problem.Write(ctx, fasthttp.StatusServiceUnavailable, "the message bus is unavailable")
		return nil
	case err != nil:
		problem.Write(ctx, fasthttp.StatusInternalServerError, "internal error")
		return nil
	}
	return j
}

func (a *API) sitemapXML(ctx *fasthttp.RequestCtx, id string) {
	j := a.lookup(ctx, job.Sitemap, id)
	if j == nil {
		return
	}
	if j.Status != job.Completed {
		problem.Write(ctx, fasthttp.StatusNotFound, "sitemap "+id+" is "+string(j.Status)+", not completed")
		return
	}
	var res job.SitemapResult
	if err := json.Unmarshal(j.Result, &res); err != nil {
		problem.Write(ctx, fasthttp.StatusInternalServerError, "internal error")
		return
	}
	var buf bytes.Buffer
	if err := sitemap.WriteXML(&buf, res.Pages); err != nil {
		problem.Write(ctx, fasthttp.StatusInternalServerError, "internal error")
		return
	}
	ctx.SetContentType("application/xml; charset=utf-8")
	ctx.SetBody(buf.Bytes())
}

func (a *API) readyz(ctx *fasthttp.RequestCtx, _ string) {
	if err := a.Ready(); err != nil {
		problem.Write(ctx, fasthttp.StatusServiceUnavailable, "not ready: "+err.Error())
		return
	}
	writeJSON(ctx, map[string]string{"status": "ready"})
}

func (a *API) metrics(ctx *fasthttp.RequestCtx, _ string) {
	ctx.SetContentType("text/plain; version=0.0.4; charset=utf-8")
	obs.Default.Write(ctx)
}

func (a *API) openapi(ctx *fasthttp.RequestCtx, _ string) {
	ctx.SetContentType("application/json")
	ctx.SetBody(openAPI)
}

func isJSON(ct []byte) bool {
	mt, _, err := mime.ParseMediaType(string(ct))
	return err == nil && mt == "application/json"
}

func writeJSON(ctx *fasthttp.RequestCtx, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		problem.Write(ctx, fasthttp.StatusInternalServerError, "internal error")
		return
	}
	ctx.SetContentType("application/json")
	ctx.SetBody(body)
}

func statusLabel(code int) string {
	const digits = "0123456789"
	if code < 100 || code > 999 {
		return "other"
	}
	return string([]byte{digits[code/100], digits[code/10%10], digits[code%10]})
}
