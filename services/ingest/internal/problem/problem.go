// Package problem writes RFC 9457 problem details, the one error format of
// ingest's API.
package problem

import (
	"encoding/json"
	"strconv"

	"github.com/valyala/fasthttp"

	"github.com/surveyor/surveyor/services/ingest/internal/validate"
)

// Details is the problem+json document.
type Details struct {
	Type   string                `json:"type"`
	Title  string                `json:"title"`
	Status int                   `json:"status"`
	Detail string                `json:"detail,omitempty"`
	Errors []validate.FieldError `json:"errors,omitempty"`
}

// Write answers with a problem. Statuses that ask the client to come back
// (429, 503) carry Retry-After.
func Write(ctx *fasthttp.RequestCtx, status int, detail string, errs ...validate.FieldError) {
	p := Details{
		Type:   "about:blank",
		Title:  fasthttp.StatusMessage(status),
		Status: status,
		Detail: detail,
		Errors: errs,
	}
	body, _ := json.Marshal(p)
	ctx.Response.Reset()
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/problem+json")
	if status == fasthttp.StatusTooManyRequests || status == fasthttp.StatusServiceUnavailable {
		ctx.Response.Header.Set("Retry-After", strconv.Itoa(retryAfter(status)))
	}
	ctx.SetBody(body)
}

func retryAfter(status int) int {
	if status == fasthttp.StatusTooManyRequests {
		return 1
	}
	return 2
}
