package job

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestDocumentRoundTrip(t *testing.T) {
	now := time.Date(2026, 11, 22, 3, 4, 5, 0, time.UTC)
	for _, j := range []Job{
		{ID: "a1", Kind: Scan, Status: Completed, URL: "https://x.example/", Options: []string{"tls"}, Created: now, Started: &now, Finished: &now, Attempts: 2, Result: json.RawMessage(`{"http_status":200}`)},
		{ID: "b2", Kind: Sitemap, Status: Running, URL: "https://y.example/", MaxPages: 50, Created: now, Progress: json.RawMessage(`{"pages_fetched":3}`)},
		{ID: "c3", Kind: Email, Status: Failed, Email: "a@z.example", Force: true, Created: now, Error: "boom"},
	} {
		data, err := json.Marshal(j)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(data), `{"`+j.Kind.IDField()+`":"`+j.ID+`",`) {
			t.Fatalf("%s document does not start with its id field: %s", j.Kind, data)
		}
		var back Job
		if err := json.Unmarshal(data, &back); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back, j) {
			t.Fatalf("round trip changed the %s job:\n%+v\n%+v", j.Kind, back, j)
		}
	}
	var j Job
	if err := json.Unmarshal([]byte(`{"kind":"fax","status":"queued"}`), &j); err == nil {
		t.Fatal("unknown kind accepted")
	}
}

// TestAppendJSONMatchesReflection holds the hand-written encoder to what
// encoding/json writes for the same fields by reflection, for every field
// set and unset and for strings that need escaping.
func TestAppendJSONMatchesReflection(t *testing.T) {
	at := time.Date(2026, 3, 4, 5, 6, 7, 890123000, time.UTC)
	later := at.Add(1500 * time.Millisecond)
	zone := time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("", 5*3600+1800))
	jobs := []Job{
		{ID: "0b7c5a9e-4a7e-4b8e-9d6c-1f2e3d4c5b6a", Kind: Scan, Status: Queued, URL: "https://a.example/", Options: []string{"technologies"}, Created: at},
		{ID: "x", Kind: Scan, Status: Queued, URL: "https://xn--bcher-kva.example/p?q=1&r=<2>", Options: []string{"tls", "dns"}, Force: true, Created: at},
		{ID: "y", Kind: Sitemap, Status: Running, URL: "https://b.example/", MaxPages: 10000, Created: at, Started: &at, Attempts: 2, Progress: json.RawMessage(`{"pages_fetched":3}`)},
		{ID: "z", Kind: Email, Status: Queued, Email: "Ünïcode \"quoted\"\\ \u2028 \x01@b.example", Created: zone},
		{ID: "w", Kind: Email, Status: Failed, Email: "bad \xff utf8@c.example", Created: at, Started: &at, Finished: &later, Attempts: 3, Error: "c.example: 550 5.1.1 <w@c.example> unknown"},
		{ID: "v", Kind: Scan, Status: Completed, URL: "http://d.example", Created: at, Started: &at, Finished: &later, Attempts: 1, Result: json.RawMessage(`{"final_url":"http://d.example/","technologies":[{"name":"Nginx"}]}`)},
		{},
	}
	for _, j := range jobs {
		body, err := json.Marshal(jobFields(j))
		if err != nil {
			t.Fatal(err)
		}
		id, _ := json.Marshal(j.ID)
		want := `{"` + j.Kind.IDField() + `":` + string(id) + `,` + string(body[1:])
		if got := j.AppendJSON([]byte("prefix")); string(got) != "prefix"+want {
			t.Errorf("AppendJSON:\n got %s\nwant prefix%s", got, want)
		}
		if got, _ := json.Marshal(j); string(got) != want {
			t.Errorf("json.Marshal:\n got %s\nwant %s", got, want)
		}
	}
}
