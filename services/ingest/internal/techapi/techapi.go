// Package techapi serves the /technologies area of contract §6: the
// fingerprint database as a scanner sees it (built-in, FINGERPRINTS_DIR and
// custom technologies) with its load report, and PUT and DELETE of custom
// technologies, which every scanner replica applies from the TECHNOLOGIES
// bucket. Only holders of a token from TECHNOLOGIES_API_TOKENS get in.
package techapi

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"mime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/surveyor/surveyor/pkg/fingerprint"
	"github.com/surveyor/surveyor/pkg/techstore"
	"github.com/surveyor/surveyor/services/ingest/internal/problem"
	"github.com/surveyor/surveyor/services/ingest/internal/validate"
)

// Prefix is the path of the area.
const Prefix = "/technologies"

// ReportPath serves the database's load report. No slug has a '_', so no
// technology can take the path.
const ReportPath = Prefix + "/_report"

// storeTimeout bounds each round trip to JetStream; fasthttp's RequestCtx
// is recycled after the handler, so it is never used as a context.
const storeTimeout = 3 * time.Second

// API is the /technologies area. An API without tokens is disabled and
// answers 404, as if the area did not exist.
type API struct {
	tokens [][sha256.Size]byte
	store  *techstore.Store
	base   *fingerprint.DB

	mu     sync.Mutex
	cached catalog
}

// catalog is base merged with one set of custom technologies, kept while
// the set (slugs and revisions) does not change: a merge of the built-in
// database costs milliseconds, a listing of the bucket far less.
type catalog struct {
	key    string
	db     *fingerprint.DB
	custom map[string]techstore.Entry
}

// New makes the area. base is the built-in database with FINGERPRINTS_DIR
// on top, as the scanners load it.
func New(tokens []string, store *techstore.Store, base *fingerprint.DB) *API {
	a := &API{store: store, base: base}
	for _, t := range tokens {
		a.tokens = append(a.tokens, sha256.Sum256([]byte(t)))
	}
	return a
}

// Summary is one entry of the list.
type Summary struct {
	Name       string   `json:"name"`
	Slug       string   `json:"slug"`
	Categories []string `json:"categories"`
	Website    string   `json:"website,omitempty"`
	Custom     bool     `json:"custom"`
}

// Detail is one technology; Definition is the stored Wappalyzer-format
// object of a custom one.
type Detail struct {
	Summary
	Description string          `json:"description,omitempty"`
	Icon        string          `json:"icon,omitempty"`
	CPE         string          `json:"cpe,omitempty"`
	Definition  json.RawMessage `json:"definition,omitempty"`
}

// Handler serves every path under Prefix.
func (a *API) Handler(ctx *fasthttp.RequestCtx) {
	rest, ok := strings.CutPrefix(string(ctx.Path()), Prefix)
	slug, item := strings.CutPrefix(rest, "/")
	if len(a.tokens) == 0 || !ok || (rest != "" && !item) || strings.Contains(slug, "/") {
		problem.Write(ctx, fasthttp.StatusNotFound, "no such path")
		return
	}
	if !a.authorized(ctx.Request.Header.Peek(fasthttp.HeaderAuthorization)) {
		problem.Write(ctx, fasthttp.StatusUnauthorized, "a valid bearer token is required")
		ctx.Response.Header.Set(fasthttp.HeaderWWWAuthenticate, `Bearer realm="surveyor"`)
		return
	}
	method := string(ctx.Method())
	if method == fasthttp.MethodHead {
		method = fasthttp.MethodGet
	}
	switch {
	case slug == "" && method == fasthttp.MethodGet:
		a.list(ctx)
	case slug == "":
		notAllowed(ctx, "GET, HEAD")
	case Prefix+"/"+slug == ReportPath && method == fasthttp.MethodGet:
		a.report(ctx)
	case Prefix+"/"+slug == ReportPath:
		notAllowed(ctx, "GET, HEAD")
	case method == fasthttp.MethodGet:
		a.get(ctx, slug)
	case method == fasthttp.MethodPut:
		a.put(ctx, slug)
	case method == fasthttp.MethodDelete:
		a.delete(ctx, slug)
	default:
		notAllowed(ctx, "GET, HEAD, PUT, DELETE")
	}
}

// authorized checks "Bearer <token>" against every configured token. The
// digests have one length, so ConstantTimeCompare's time says nothing about
// how much of a guess was right, nor how long the real tokens are; and every
// token is compared, so neither does which one matched.
func (a *API) authorized(header []byte) bool {
	scheme, token, ok := strings.Cut(strings.TrimSpace(string(header)), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	given := sha256.Sum256([]byte(strings.TrimSpace(token)))
	match := 0
	for _, t := range a.tokens {
		match |= subtle.ConstantTimeCompare(given[:], t[:])
	}
	return match == 1
}

func (a *API) list(ctx *fasthttp.RequestCtx) {
	c, err := a.current()
	if err != nil {
		storeError(ctx)
		return
	}
	techs := c.db.Technologies()
	out := make([]Summary, len(techs))
	for i, t := range techs {
		out[i] = summary(t, c)
	}
	writeJSON(ctx, fasthttp.StatusOK, map[string]any{"technologies": out})
}

// report answers the load report of the database scans use now: what it
// holds, pattern counts per kind, what runs and what needs a browser, and
// what could not be used as written.
func (a *API) report(ctx *fasthttp.RequestCtx) {
	c, err := a.current()
	if err != nil {
		storeError(ctx)
		return
	}
	writeJSON(ctx, fasthttp.StatusOK, c.db.Report())
}

func (a *API) get(ctx *fasthttp.RequestCtx, slug string) {
	c, err := a.current()
	if err != nil {
		storeError(ctx)
		return
	}
	t, ok := c.db.Lookup(slug)
	if !ok {
		problem.Write(ctx, fasthttp.StatusNotFound, "no technology with slug "+strconv.Quote(slug))
		return
	}
	writeJSON(ctx, fasthttp.StatusOK, detail(t, c))
}

// put validates the definition twice: on its own (patterns, fields, slug)
// and within the whole database (categories and the technologies it
// implies, excludes or requires must exist), then stores it.
func (a *API) put(ctx *fasthttp.RequestCtx, slug string) {
	if !isJSON(ctx.Request.Header.ContentType()) {
		problem.Write(ctx, fasthttp.StatusUnsupportedMediaType, "Content-Type must be application/json")
		return
	}
	body := ctx.PostBody()
	t, _, err := techstore.Parse(slug, body)
	if err != nil {
		invalid(ctx, err)
		return
	}
	c, err := a.current()
	if err != nil {
		storeError(ctx)
		return
	}
	merged := fingerprint.Merge(c.db, fingerprint.NewDB(t))
	if errs := referenceProblems(merged, t); len(errs) > 0 {
		problem.Write(ctx, fasthttp.StatusBadRequest, "technology "+strconv.Quote(t.Name)+" refers to what the database does not hold", errs...)
		return
	}
	sctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	e, created, err := a.store.Put(sctx, slug, body)
	if err != nil {
		if !invalid(ctx, err) {
			storeError(ctx)
		}
		return
	}
	stored, _ := merged.Lookup(slug)
	status := fasthttp.StatusOK
	if created {
		status = fasthttp.StatusCreated
		ctx.Response.Header.Set(fasthttp.HeaderLocation, Prefix+"/"+slug)
	}
	writeJSON(ctx, status, detail(stored, catalog{custom: map[string]techstore.Entry{slug: e}}))
}

func (a *API) delete(ctx *fasthttp.RequestCtx, slug string) {
	sctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	err := a.store.Delete(sctx, slug)
	switch {
	case errors.Is(err, techstore.ErrNotFound):
		msg := "no custom technology with slug " + strconv.Quote(slug)
		if _, builtin := a.base.Lookup(slug); builtin {
			msg += "; built-in technologies cannot be deleted, only replaced by a PUT"
		}
		problem.Write(ctx, fasthttp.StatusNotFound, msg)
	case err != nil:
		storeError(ctx)
	default:
		ctx.SetStatusCode(fasthttp.StatusNoContent)
	}
}

// current returns base merged with the custom technologies stored now.
// Reading the bucket on each request means a GET right after a PUT or
// DELETE sees it, whichever ingest replica answers.
func (a *API) current() (catalog, error) {
	sctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	entries, err := a.store.List(sctx)
	if err != nil {
		return catalog{}, err
	}
	var key strings.Builder
	custom := make(map[string]techstore.Entry, len(entries))
	techs := make([]*fingerprint.Technology, len(entries))
	for i, e := range entries {
		key.WriteString(e.Slug + "@" + strconv.FormatUint(e.Revision, 10) + " ")
		custom[e.Slug] = e
		techs[i] = e.Technology
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cached.db == nil || a.cached.key != key.String() {
		a.cached = catalog{key: key.String(), db: fingerprint.Merge(a.base, fingerprint.NewDB(techs...)), custom: custom}
	}
	return a.cached, nil
}

// referenceProblems lists the categories and technologies t names that
// merged, the database with t in it, does not hold.
func referenceProblems(merged *fingerprint.DB, t *fingerprint.Technology) []validate.FieldError {
	var errs []validate.FieldError
	for _, p := range merged.Report().Problems {
		if p.Technology == t.Name {
			errs = append(errs, fieldError(p))
		}
	}
	return errs
}

// invalid answers 400 for a definition techstore refused, listing each
// unusable pattern under "<technology>.<field>"; false if err is another
// kind of error.
func invalid(ctx *fasthttp.RequestCtx, err error) bool {
	var inv *techstore.InvalidError
	if !errors.As(err, &inv) {
		return false
	}
	errs := make([]validate.FieldError, len(inv.Problems))
	for i, p := range inv.Problems {
		errs[i] = fieldError(p)
	}
	problem.Write(ctx, fasthttp.StatusBadRequest, inv.Reason, errs...)
	return true
}

func fieldError(p fingerprint.Problem) validate.FieldError {
	msg := p.Reason
	if p.Pattern != "" {
		msg = strconv.Quote(p.Pattern) + ": " + p.Reason
	}
	return validate.FieldError{Field: p.Technology + "." + p.Field, Message: msg}
}

// storeError answers 503: JetStream did not answer in time. The cause
// stays out of the body, as internals do.
func storeError(ctx *fasthttp.RequestCtx) {
	problem.Write(ctx, fasthttp.StatusServiceUnavailable, "the fingerprint store is unavailable; nothing was changed")
}

func summary(t *fingerprint.Technology, c catalog) Summary {
	_, custom := c.custom[t.Slug]
	cats := t.Categories
	if cats == nil {
		cats = []string{}
	}
	return Summary{Name: t.Name, Slug: t.Slug, Categories: cats, Website: t.Website, Custom: custom}
}

func detail(t *fingerprint.Technology, c catalog) Detail {
	return Detail{Summary: summary(t, c), Description: t.Description, Icon: t.Icon, CPE: t.CPE,
		Definition: c.custom[t.Slug].Definition}
}

func notAllowed(ctx *fasthttp.RequestCtx, allow string) {
	problem.Write(ctx, fasthttp.StatusMethodNotAllowed, "method "+string(ctx.Method())+" is not allowed here")
	ctx.Response.Header.Set(fasthttp.HeaderAllow, allow)
}

func isJSON(ct []byte) bool {
	mt, _, err := mime.ParseMediaType(string(ct))
	return err == nil && mt == "application/json"
}

func writeJSON(ctx *fasthttp.RequestCtx, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		problem.Write(ctx, fasthttp.StatusInternalServerError, "internal error")
		return
	}
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
	ctx.SetBody(body)
}
