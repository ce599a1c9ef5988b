// Package config is how Surveyor's components declare their environment
// variables. After Loki's and Caddy's modules, each component has a Config
// type whose Register method declares its variables, each with a default, a
// check and one line of meaning, and whose optional Validate checks what no
// single variable can; a binary loads its components together, so every
// variable is read once and a misconfigured process stops at start with one
// message that names each offending variable. The same declarations list a
// binary's variables for its documentation and deployment files.
package config

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Component is a part of a process with settings of its own. Register
// declares them on s, which stores each default in place at once.
type Component interface {
	Register(s *Set)
}

// RegisterFunc is a Component made of a function, for settings that have
// no type of their own.
type RegisterFunc func(s *Set)

// Register calls f.
func (f RegisterFunc) Register(s *Set) { f(s) }

// Validator is a Component with checks across its variables, or on a
// variable against another component's (run after every value is read).
type Validator interface {
	Validate() error
}

// Lookup finds a variable's value; os.LookupEnv is a real process's.
type Lookup func(name string) (string, bool)

// Environ reads the process environment.
var Environ Lookup = os.LookupEnv

// Map reads a fixed set of variables; tests use it.
func Map(m map[string]string) Lookup {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// Var is one declared variable as an operator sees it.
type Var struct {
	Name    string `json:"name"`
	Default string `json:"default"` // "" when empty or computed (Usage says how)
	Usage   string `json:"usage"`
	set     func(string) error
}

// Set is the variables declared by the components of one process.
type Set struct {
	vars  []*Var
	names map[string]bool
}

// Func declares a variable whose value set parses and stores; set also
// receives def at once unless it is "". A set error says what is wrong
// with the value; Load prefixes the name.
func (s *Set) Func(name, def, usage string, set func(string) error) {
	if s.names[name] {
		// Two components reading one variable is the duplication this
		// package exists to prevent: one declares it, the binary passes
		// the value to the other.
		panic("config: " + name + " declared twice")
	}
	if s.names == nil {
		s.names = map[string]bool{}
	}
	s.names[name] = true
	if def != "" {
		if err := set(def); err != nil {
			panic(fmt.Sprintf("config: default of %s: %v", name, err))
		}
	}
	s.vars = append(s.vars, &Var{Name: name, Default: def, Usage: usage, set: set})
}

// String declares a text variable.
func (s *Set) String(p *string, name, def, usage string) {
	*p = def
	s.Func(name, def, usage, func(v string) error { *p = v; return nil })
}

// List declares a comma-separated list.
func (s *Set) List(p *[]string, name, usage string) {
	*p = nil
	s.Func(name, "", usage, func(v string) error { *p = Split(v); return nil })
}

// Split cuts a comma-separated value into its items, dropping empty ones.
func Split(v string) []string {
	var out []string
	for _, item := range strings.Split(v, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// Bool declares a boolean in the forms strconv.ParseBool accepts.
func (s *Set) Bool(p *bool, name string, def bool, usage string) {
	*p = def
	s.Func(name, strconv.FormatBool(def), usage, func(v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("%q is not a boolean (use true or false)", v)
		}
		*p = b
		return nil
	})
}

// Int declares a whole number within [min, max].
func (s *Set) Int(p *int, name string, def, min, max int, usage string) {
	*p = def
	s.Func(name, strconv.Itoa(def), usage, func(v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < min || n > max {
			return fmt.Errorf("%q is not a whole number from %d to %d", v, min, max)
		}
		*p = n
		return nil
	})
}

// Int64 declares a whole number within [min, max].
func (s *Set) Int64(p *int64, name string, def, min, max int64, usage string) {
	*p = def
	s.Func(name, strconv.FormatInt(def, 10), usage, func(v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < min || n > max {
			return fmt.Errorf("%q is not a whole number from %d to %d", v, min, max)
		}
		*p = n
		return nil
	})
}

// Float declares a non-negative number.
func (s *Set) Float(p *float64, name string, def float64, usage string) {
	*p = def
	s.Func(name, strconv.FormatFloat(def, 'g', -1, 64), usage, func(v string) error {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 {
			return fmt.Errorf("%q is not a non-negative number", v)
		}
		*p = f
		return nil
	})
}

// Duration declares a Go duration such as 30s or 24h. A value set must be
// positive; a default of 0 means the feature is off until one is set.
func (s *Set) Duration(p *time.Duration, name string, def time.Duration, usage string) {
	*p = def
	s.Func(name, FormatDuration(def), usage, func(v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return fmt.Errorf("%q is not a positive duration such as 30s or 24h", v)
		}
		*p = d
		return nil
	})
}

// FormatDuration writes d as a person would: 24h, 2m, 1m30s, not 24h0m0s.
func FormatDuration(d time.Duration) string {
	if d == 0 {
		return ""
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// Load declares the variables of every component (storing the defaults),
// reads those set in lookup (an empty value means the default) and runs
// each Validate. The error names every bad variable.
func Load(lookup Lookup, cs ...Component) error {
	var s Set
	for _, c := range cs {
		c.Register(&s)
	}
	var errs []error
	for _, v := range s.vars {
		raw, _ := lookup(v.Name)
		if raw = strings.TrimSpace(raw); raw == "" {
			continue
		}
		if err := v.set(raw); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", v.Name, err))
		}
	}
	for _, c := range cs {
		if v, ok := c.(Validator); ok {
			if err := v.Validate(); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("invalid configuration: %w", errors.Join(errs...))
	}
	return nil
}

// Describe lists the variables the components declare, in order. It
// leaves the components at their defaults.
func Describe(cs ...Component) []Var {
	var s Set
	for _, c := range cs {
		c.Register(&s)
	}
	out := make([]Var, len(s.vars))
	for i, v := range s.vars {
		out[i] = *v
		out[i].set = nil
	}
	return out
}

// Defaults returns a C with every variable at its default, as an empty
// environment leaves it.
func Defaults[C any, P interface {
	*C
	Component
}]() C {
	var c C
	P(&c).Register(new(Set))
	return c
}

// Errorf reports a bad value of the named variable; Validate methods
// return it so the message names the variable as Load's own do.
func Errorf(name, format string, args ...any) error {
	return fmt.Errorf("%s: %s", name, fmt.Sprintf(format, args...))
}
