package schema

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"time"
)

// Enum is implemented by string types that take a fixed set of values;
// their schema lists them.
type Enum interface{ Enum() []string }

// Ref is where Set puts the schemas of named struct types.
const Ref = "#/components/schemas/"

// Set derives schemas and collects the named struct types they refer to,
// each once, as components.
type Set struct {
	// Names renames components (by default a type's Go name).
	Names map[reflect.Type]string

	components *Object
	owner      map[string]reflect.Type
}

// NewSet returns an empty Set.
func NewSet(names map[reflect.Type]string) *Set {
	return &Set{Names: names, components: O(), owner: map[string]reflect.Type{}}
}

// Components returns the schemas of the named struct types seen so far,
// by component name.
func (s *Set) Components() *Object { return s.components }

// Of returns the schema of values of type t: a $ref for a named struct
// type (whose schema becomes a component), the schema itself otherwise.
func (s *Set) Of(t reflect.Type) *Object {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if e, ok := reflect.Zero(t).Interface().(Enum); ok {
		return O("type", "string", "enum", e.Enum())
	}
	switch t {
	case reflect.TypeFor[time.Time]():
		return O("type", "string", "format", "date-time")
	case reflect.TypeFor[json.RawMessage]():
		return O() // any JSON value
	}
	switch t.Kind() {
	case reflect.Bool:
		return O("type", "boolean")
	case reflect.String:
		return O("type", "string")
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return O("type", "integer")
	case reflect.Uint, reflect.Uint64, reflect.Uintptr:
		return O("type", "integer", "minimum", 0)
	case reflect.Uint8, reflect.Uint16, reflect.Uint32:
		return O("type", "integer", "minimum", 0, "maximum", uint64(math.MaxUint64)>>(64-t.Bits()))
	case reflect.Float32, reflect.Float64:
		return O("type", "number")
	case reflect.Slice, reflect.Array:
		return O("type", "array", "items", s.Of(t.Elem()))
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			panic(fmt.Sprintf("schema: map key of %v is not a string", t))
		}
		return O("type", "object", "additionalProperties", s.Of(t.Elem()))
	case reflect.Interface:
		return O()
	case reflect.Struct:
		if t.Name() == "" {
			return s.object(t)
		}
		return O("$ref", Ref+s.component(t))
	}
	panic(fmt.Sprintf("schema: no JSON form for %v", t))
}

// component registers the schema of the named struct type t and returns
// its name.
func (s *Set) component(t reflect.Type) string {
	name := s.Names[t]
	if name == "" {
		name = t.Name()
	}
	switch owner, ok := s.owner[name]; {
	case ok && owner == t:
		return name
	case ok:
		panic(fmt.Sprintf("schema: %v and %v are both named %s", owner, t, name))
	}
	s.owner[name] = t
	s.components.Set(name, nil) // reserved first: the type may refer to itself
	s.components.Set(name, s.object(t))
	return name
}

// object is the schema of a struct type: its JSON fields as properties,
// in order; those encoding/json always writes are required. Responses may
// grow fields in later versions, so other properties are not forbidden.
func (s *Set) object(t reflect.Type) *Object {
	props, required := O(), []string{}
	s.fields(t, props, &required)
	o := O("type", "object")
	if len(required) > 0 {
		o.Set("required", required)
	}
	return o.Set("properties", props)
}

// Properties returns the properties of struct type t and the names of
// those always present, for a caller that builds a schema of its own.
func (s *Set) Properties(t reflect.Type) (*Object, []string) {
	props, required := O(), []string{}
	s.fields(t, props, &required)
	return props, required
}

// fields adds the JSON fields of struct type t to props, embedded structs
// flattened as encoding/json flattens them.
func (s *Set) fields(t reflect.Type, props *Object, required *[]string) {
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, comma := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" && !comma {
			continue
		}
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			s.fields(f.Type, props, required)
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		optional := hasOpt(opts, "omitempty") || hasOpt(opts, "omitzero")
		p := s.Of(f.Type)
		if tag := f.Tag.Get("schema"); tag != "" {
			p = annotate(p, tag)
		}
		if !optional && nilable(f.Type) {
			p = orNull(p)
		}
		props.Set(name, p)
		if !optional {
			*required = append(*required, name)
		}
	}
}

// annotate adds a field's `schema:"key=value,..."` keywords to its
// schema (to the items of a list): "format=uuid", "minimum=0". A value
// that reads as JSON (a number) is one; any other is a string.
func annotate(p *Object, tag string) *Object {
	if typ, _ := p.Get("type"); typ == "array" {
		items, _ := p.Get("items")
		annotate(items.(*Object), tag)
		return p
	}
	for kv := range strings.SplitSeq(tag, ",") {
		k, v, _ := strings.Cut(kv, "=")
		var value any = v
		var n json.Number
		if json.Unmarshal([]byte(v), &n) == nil {
			value = n
		}
		p.Set(k, value)
	}
	return p
}

func hasOpt(opts, want string) bool {
	for o := range strings.SplitSeq(opts, ",") {
		if o == want {
			return true
		}
	}
	return false
}

// nilable reports whether a value of t may be written as null.
func nilable(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface:
		return t != reflect.TypeFor[json.RawMessage]()
	}
	return false
}

// orNull lets a schema also take null.
func orNull(p *Object) *Object {
	switch typ, _ := p.Get("type"); typ := typ.(type) {
	case string:
		return p.Set("type", []string{typ, "null"})
	case nil:
		if _, ok := p.Get("$ref"); ok {
			return O("anyOf", []any{p, O("type", "null")})
		}
	}
	return p
}
