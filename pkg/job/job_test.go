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
