package schema

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

type color string

func (color) Enum() []string { return []string{"red", "blue"} }

type inner struct {
	N uint16 `json:"n"`
}

type Embedded struct {
	Shared string `json:"shared"`
}

type sample struct {
	Embedded
	Name     string            `json:"name"`
	ID       string            `json:"id" schema:"format=uuid"`
	Score    int               `json:"score,omitempty" schema:"minimum=0,maximum=100"`
	Tags     []string          `json:"tags"`
	IDs      []string          `json:"ids,omitzero" schema:"format=uuid"`
	Color    color             `json:"color"`
	At       time.Time         `json:"at"`
	Inner    *inner            `json:"inner,omitempty"`
	Must     *inner            `json:"must"`
	Headers  map[string]string `json:"headers,omitempty"`
	Raw      json.RawMessage   `json:"raw,omitempty"`
	Skipped  string            `json:"-"`
	Dash     string            `json:"-,"`
	NoTag    bool
	private  int
	Fraction float64 `json:"fraction"`
}

func TestOf(t *testing.T) {
	s := NewSet(map[reflect.Type]string{reflect.TypeFor[inner](): "Inner"})
	if got := js(s.Of(reflect.TypeFor[sample]())); got != `{"$ref":"#/components/schemas/sample"}` {
		t.Fatalf("named struct: %s", got)
	}
	want := `{"sample":{"type":"object","required":["shared","name","id","tags","color","at","must","-","NoTag","fraction"],"properties":{` +
		`"shared":{"type":"string"},` +
		`"name":{"type":"string"},` +
		`"id":{"type":"string","format":"uuid"},` +
		`"score":{"type":"integer","minimum":0,"maximum":100},` +
		`"tags":{"type":["array","null"],"items":{"type":"string"}},` +
		`"ids":{"type":"array","items":{"type":"string","format":"uuid"}},` +
		`"color":{"type":"string","enum":["red","blue"]},` +
		`"at":{"type":"string","format":"date-time"},` +
		`"inner":{"$ref":"#/components/schemas/Inner"},` +
		`"must":{"anyOf":[{"$ref":"#/components/schemas/Inner"},{"type":"null"}]},` +
		`"headers":{"type":"object","additionalProperties":{"type":"string"}},` +
		`"raw":{},` +
		`"-":{"type":"string"},` +
		`"NoTag":{"type":"boolean"},` +
		`"fraction":{"type":"number"}}},` +
		`"Inner":{"type":"object","required":["n"],"properties":{"n":{"type":"integer","minimum":0,"maximum":65535}}}}`
	if got := js(s.Components()); got != want {
		t.Errorf("components:\n got %s\nwant %s", got, want)
	}
}

func TestNameClash(t *testing.T) {
	type other struct{ X int }
	s := NewSet(map[reflect.Type]string{reflect.TypeFor[other](): "Inner", reflect.TypeFor[inner](): "Inner"})
	s.Of(reflect.TypeFor[inner]())
	defer func() {
		if recover() == nil {
			t.Error("two types under one component name were accepted")
		}
	}()
	s.Of(reflect.TypeFor[other]())
}

func TestObjectKeepsOrder(t *testing.T) {
	o := O("b", 1, "a", 2, "c", 3)
	o.Set("a", 4)
	o.Set("d", 5)
	if got := js(o); got != `{"b":1,"a":4,"c":3,"d":5}` {
		t.Errorf("got %s", got)
	}
}

func js(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
