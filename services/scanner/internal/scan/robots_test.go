package scan

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/surveyor/surveyor/pkg/fingerprint"
)

// TestRobotsFetchedOnlyWhenAFingerprintReadsIt: robots.txt costs a request,
// so the scanner asks for it only when the engine has a robots pattern, and
// then the pattern matches what the site serves there.
func TestRobotsFetchedOnlyWhenAFingerprintReadsIt(t *testing.T) {
	var robotsHits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			robotsHits.Add(1)
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprint(w, "User-agent: *\nDisallow: /bitrix/admin/\n")
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html><head><title>Shop</title></head><body>Hello</body></html>")
	}))
	defer srv.Close()

	h := newHarness(t)
	if _, err := h.scan(srv.URL + "/"); err != nil {
		t.Fatal(err)
	}
	if n := robotsHits.Load(); n != 0 {
		t.Fatalf("robots.txt fetched %d times by an engine without robots patterns", n)
	}

	techs, err := fingerprint.ParseTechnologies([]byte(`{"Bitrix": {"cats": [1], "robots": "Disallow: /bitrix/"}}`))
	if err != nil {
		t.Fatal(err)
	}
	e := fingerprint.NewEngine(fingerprint.NewDB(techs["Bitrix"]))
	if !e.Uses("robots") || e.Uses("dns") {
		t.Fatalf("Uses: robots %v dns %v", e.Uses("robots"), e.Uses("dns"))
	}
	h.eng = func() *fingerprint.Engine { return e }
	res, err := h.scan(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	if n := robotsHits.Load(); n != 1 {
		t.Fatalf("robots.txt fetched %d times, want 1", n)
	}
	if _, ok := techByName(res, "Bitrix"); !ok {
		t.Fatalf("robots pattern did not match: %+v", res.Technologies)
	}
}
