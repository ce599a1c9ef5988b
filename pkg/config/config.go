// Package config reads Surveyor's environment variables. A Reader collects
// every bad value, so a misconfigured process stops at start with one message
// that names each offending variable.
package config

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Reader reads typed values from the environment and remembers failures.
type Reader struct {
	lookup func(string) (string, bool)
	errs   []error
}

// FromEnv reads the process environment.
func FromEnv() *Reader { return &Reader{lookup: os.LookupEnv} }

// FromMap reads a fixed set of variables; tests use it.
func FromMap(m map[string]string) *Reader {
	return &Reader{lookup: func(k string) (string, bool) { v, ok := m[k]; return v, ok }}
}

func (r *Reader) raw(name string) (string, bool) {
	v, ok := r.lookup(name)
	v = strings.TrimSpace(v)
	return v, ok && v != ""
}

// Fail records a problem with a variable found by the caller's own checks.
func (r *Reader) Fail(name, format string, args ...any) {
	r.errs = append(r.errs, fmt.Errorf("%s: %s", name, fmt.Sprintf(format, args...)))
}

// String returns the variable or def when it is unset or empty.
func (r *Reader) String(name, def string) string {
	if v, ok := r.raw(name); ok {
		return v
	}
	return def
}

// List splits a comma-separated variable, dropping empty items.
func (r *Reader) List(name string) []string {
	v, ok := r.raw(name)
	if !ok {
		return nil
	}
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Bool accepts the forms strconv.ParseBool does.
func (r *Reader) Bool(name string, def bool) bool {
	v, ok := r.raw(name)
	if !ok {
		return def
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		r.Fail(name, "%q is not a boolean (use true or false)", v)
		return def
	}
	return b
}

// Int reads an integer within [min, max].
func (r *Reader) Int(name string, def, min, max int) int {
	v, ok := r.raw(name)
	if !ok {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < min || n > max {
		r.Fail(name, "%q is not a whole number from %d to %d", v, min, max)
		return def
	}
	return n
}

// Float reads a non-negative number.
func (r *Reader) Float(name string, def float64) float64 {
	v, ok := r.raw(name)
	if !ok {
		return def
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 0 {
		r.Fail(name, "%q is not a non-negative number", v)
		return def
	}
	return f
}

// Duration reads a positive Go duration such as 30s or 24h.
func (r *Reader) Duration(name string, def time.Duration) time.Duration {
	v, ok := r.raw(name)
	if !ok {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		r.Fail(name, "%q is not a positive duration such as 30s or 24h", v)
		return def
	}
	return d
}

// Err returns every recorded problem joined, or nil.
func (r *Reader) Err() error {
	if len(r.errs) == 0 {
		return nil
	}
	return fmt.Errorf("invalid configuration: %w", errors.Join(r.errs...))
}
