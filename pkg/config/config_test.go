package config

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// sample has one variable of every kind and a check across two of them.
type sample struct {
	Name    string
	Tags    []string
	On      bool
	N       int
	Big     int64
	Rate    float64
	Wait    time.Duration
	Retry   time.Duration
	Limit   time.Duration
	Special string
}

func (c *sample) Register(s *Set) {
	s.String(&c.Name, "S_NAME", "surveyor", "a name")
	s.List(&c.Tags, "S_TAGS", "tags")
	s.Bool(&c.On, "S_ON", true, "a switch")
	s.Int(&c.N, "S_N", 4, 1, 10, "a count")
	s.Int64(&c.Big, "S_BIG", 1<<40, 1, 1<<50, "a large count")
	s.Float(&c.Rate, "S_RATE", 0.5, "a rate")
	s.Duration(&c.Wait, "S_WAIT", 24*time.Hour, "a wait")
	s.Duration(&c.Retry, "S_RETRY", 0, "off unless set")
	s.Duration(&c.Limit, "S_LIMIT", 90*time.Second, "a limit")
	s.Func("S_SPECIAL", "ok", "must start with ok", func(v string) error {
		if !strings.HasPrefix(v, "ok") {
			return errSpecial
		}
		c.Special = v
		return nil
	})
}

var errSpecial = errors.New("does not start with ok")

func (c *sample) Validate() error {
	if c.Limit > c.Wait {
		return Errorf("S_LIMIT", "%s is longer than S_WAIT (%s)", c.Limit, c.Wait)
	}
	return nil
}

func TestDefaults(t *testing.T) {
	var c sample
	if err := Load(Map(nil), &c); err != nil {
		t.Fatal(err)
	}
	want := sample{Name: "surveyor", On: true, N: 4, Big: 1 << 40, Rate: 0.5, Wait: 24 * time.Hour,
		Limit: 90 * time.Second, Special: "ok"}
	if c.Name != want.Name || c.Tags != nil || c.On != want.On || c.N != want.N || c.Big != want.Big ||
		c.Rate != want.Rate || c.Wait != want.Wait || c.Retry != 0 || c.Limit != want.Limit || c.Special != want.Special {
		t.Errorf("defaults %+v, want %+v", c, want)
	}
	if d := Defaults[sample](); d.N != 4 || d.Special != "ok" || d.Wait != 24*time.Hour {
		t.Errorf("Defaults %+v", d)
	}
}

func TestValuesAndBlanks(t *testing.T) {
	var c sample
	err := Load(Map(map[string]string{
		"S_NAME": " x ", "S_TAGS": "a, ,b,", "S_ON": "0", "S_N": "10", "S_BIG": "7", "S_RATE": "2.5",
		"S_WAIT": "1h", "S_RETRY": "3s", "S_LIMIT": "   ", "S_SPECIAL": "okay",
	}), &c)
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "x" || len(c.Tags) != 2 || c.Tags[1] != "b" || c.On || c.N != 10 || c.Big != 7 || c.Rate != 2.5 ||
		c.Wait != time.Hour || c.Retry != 3*time.Second || c.Limit != 90*time.Second || c.Special != "okay" {
		t.Errorf("got %+v", c)
	}
}

// Every bad variable is named in one error, Validate's included.
func TestErrorsNameEveryVariable(t *testing.T) {
	var c sample
	err := Load(Map(map[string]string{
		"S_ON": "maybe", "S_N": "11", "S_BIG": "0", "S_RATE": "-1", "S_WAIT": "soon",
		"S_RETRY": "-3s", "S_SPECIAL": "no", "S_LIMIT": "48h",
	}), &c)
	if err == nil {
		t.Fatal("bad values accepted")
	}
	for _, name := range []string{"S_ON", "S_N", "S_BIG", "S_RATE", "S_WAIT", "S_RETRY", "S_SPECIAL", "S_LIMIT"} {
		if !strings.Contains(err.Error(), name+":") {
			t.Errorf("error does not name %s: %v", name, err)
		}
	}
	for _, name := range []string{"S_NAME", "S_TAGS"} {
		if strings.Contains(err.Error(), name) {
			t.Errorf("error names %s, which was fine: %v", name, err)
		}
	}
	if !strings.Contains(err.Error(), `"maybe" is not a boolean`) {
		t.Errorf("error does not quote the bad value: %v", err)
	}
}

// A variable read by two components is refused at declaration.
func TestDeclaredTwice(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "S_NAME") {
			t.Errorf("recovered %v, want a panic naming S_NAME", r)
		}
	}()
	Describe(&sample{}, &sample{})
}

func TestDescribe(t *testing.T) {
	vars := Describe(&sample{})
	got := map[string]string{}
	for _, v := range vars {
		got[v.Name] = v.Default
	}
	want := map[string]string{
		"S_NAME": "surveyor", "S_TAGS": "", "S_ON": "true", "S_N": "4", "S_BIG": "1099511627776", "S_RATE": "0.5",
		"S_WAIT": "24h", "S_RETRY": "", "S_LIMIT": "1m30s", "S_SPECIAL": "ok",
	}
	if len(got) != len(want) || vars[0].Name != "S_NAME" || vars[0].Usage != "a name" {
		t.Fatalf("Describe %+v", vars)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s default %q, want %q", k, got[k], v)
		}
	}
}

func TestFormatDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		24 * time.Hour: "24h", 168 * time.Hour: "168h", 2 * time.Minute: "2m", 90 * time.Minute: "1h30m",
		20 * time.Second: "20s", 500 * time.Millisecond: "500ms", time.Hour + time.Second: "1h0m1s", 0: "",
	} {
		if got := FormatDuration(d); got != want {
			t.Errorf("FormatDuration(%v) = %q, want %q", d, got, want)
		}
	}
}
