// Package fpfetchtest builds the archives the tests of a fetch serve.
package fpfetchtest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"testing"
)

// Entry is one member of an archive; a Typeflag of 0 makes a regular file
// holding Body.
type Entry struct {
	Name, Body string
	Typeflag   byte
	Link       string
}

// TarGz returns the .tar.gz archive of entries, in order. A
// tar.TypeXGlobalHeader entry is a pax global header, as GitHub's archives
// begin with.
func TarGz(t testing.TB, entries ...Entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		h := &tar.Header{Name: e.Name, Mode: 0o644, Typeflag: e.Typeflag, Linkname: e.Link}
		switch e.Typeflag {
		case 0:
			h.Typeflag = tar.TypeReg
			h.Size = int64(len(e.Body))
		case tar.TypeXGlobalHeader:
			h = &tar.Header{Typeflag: e.Typeflag, PAXRecords: map[string]string{"comment": "a revision"}}
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write([]byte(e.Body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
