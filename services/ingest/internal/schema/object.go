// Package schema derives JSON Schemas (draft 2020-12, as OpenAPI 3.1 uses
// them) from Go types, by the rules encoding/json follows when it writes
// them: so a document's schema cannot miss a field its type has.
package schema

import (
	"bytes"
	"encoding/json"
)

// Object is a JSON object that keeps its members in the order they were
// set, so that a generated document reads in the order of the code.
type Object struct {
	keys   []string
	values map[string]any
}

// O makes an Object of key, value pairs.
func O(pairs ...any) *Object {
	o := &Object{values: map[string]any{}}
	for i := 0; i+1 < len(pairs); i += 2 {
		o.Set(pairs[i].(string), pairs[i+1])
	}
	return o
}

// Set adds or replaces a member; a new one goes last.
func (o *Object) Set(key string, value any) *Object {
	if _, ok := o.values[key]; !ok {
		o.keys = append(o.keys, key)
	}
	o.values[key] = value
	return o
}

// Get returns a member.
func (o *Object) Get(key string) (any, bool) {
	v, ok := o.values[key]
	return v, ok
}

// Keys lists the members' keys in order.
func (o *Object) Keys() []string { return o.keys }

// MarshalJSON writes the members in order.
func (o *Object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		key, _ := json.Marshal(k)
		b.Write(key)
		b.WriteByte(':')
		v, err := json.Marshal(o.values[k])
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
