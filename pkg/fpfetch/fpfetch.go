// Package fpfetch installs the community Wappalyzer database (the maintained
// fork's src/technologies/*.json and src/categories.json) into the directory
// FINGERPRINTS_DIR names. An operator runs it (make fingerprints); the
// archive comes from the network, so it is treated as hostile until checked:
// its size, every file's size and the unpacked total are capped, only the
// database's own files are taken, links and paths leaving the archive are
// refused, an expected SHA-256 is checked when given, and the result must
// load with the project's loader before it replaces the old directory. A
// fetch that fails leaves the old directory as it was.
package fpfetch

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/surveyor/surveyor/pkg/config"
	"github.com/surveyor/surveyor/pkg/fingerprint"
)

// DefaultURL is the maintained fork's GitHub archive; {rev} stands for the
// revision (a commit, tag or branch).
const DefaultURL = "https://github.com/enthec/webappanalyzer/archive/{rev}.tar.gz"

// DefaultRevision pins a commit rather than a branch or tag: a commit's
// content cannot move, so every fetch of the default installs the same
// database until this constant changes.
const DefaultRevision = "7de5889efd43dba739cefb61041802ae6383857f"

// maxRedirects bounds the redirects followed (GitHub sends one, to
// codeload.github.com).
const maxRedirects = 5

// Limits caps what a fetch reads and writes, so a hostile or broken archive
// (a gzip bomb, a huge file) fails cleanly instead of filling memory or disk.
type Limits struct {
	Download int64 // bytes of the archive as served
	Stream   int64 // bytes of the decompressed tar stream, skipped entries included
	File     int64 // bytes of one unpacked file
	Total    int64 // bytes of all unpacked files
	Files    int   // unpacked files
}

// DefaultLimits leave several times the room the community database needs
// (a repository archive of tens of MB, icons included; about 10 MB of JSON
// in 30 files).
var DefaultLimits = Limits{
	Download: 256 << 20,
	Stream:   1 << 30,
	File:     32 << 20,
	Total:    128 << 20,
	Files:    1000,
}

// Options says what to fetch and where to put it.
type Options struct {
	Dir      string        // FINGERPRINTS_DIR: the directory to replace
	URL      string        // archive URL; {rev} is replaced by Revision
	Revision string        // commit, tag or branch
	SHA256   string        // expected SHA-256 of the archive, hex; "" checks none
	Timeout  time.Duration // the whole download
	Limits   Limits        // zero: DefaultLimits
}

// Register declares the variables of a fetch (FINGERPRINTS_DIR is the
// services' own, declared by the caller).
func (o *Options) Register(s *config.Set) {
	s.String(&o.URL, "FINGERPRINTS_URL", DefaultURL, "archive (.tar.gz) of the community database; {rev} is replaced by FINGERPRINTS_REVISION")
	s.String(&o.Revision, "FINGERPRINTS_REVISION", DefaultRevision, "revision (commit, tag or branch) of the community database to fetch")
	s.String(&o.SHA256, "FINGERPRINTS_SHA256", "", "expected SHA-256 of the archive, hex; empty: not checked")
	s.Duration(&o.Timeout, "FINGERPRINTS_TIMEOUT", 5*time.Minute, "time the download may take, redirects included")
}

// Result describes an installed database.
type Result struct {
	URL    string // the archive's URL, revision filled in
	SHA256 string // of the archive as downloaded
	Report fingerprint.LoadReport
}

// Fetch downloads the archive, checks it, unpacks the database beside
// o.Dir, loads it, and only then puts it in o.Dir's place.
func Fetch(ctx context.Context, o Options) (Result, error) {
	if o.Limits == (Limits{}) {
		o.Limits = DefaultLimits
	}
	if o.Dir == "" {
		return Result{}, errors.New("no directory to install into (set FINGERPRINTS_DIR)")
	}
	src, err := archiveURL(o.URL, o.Revision)
	if err != nil {
		return Result{}, err
	}
	if o.SHA256 != "" {
		if b, err := hex.DecodeString(o.SHA256); err != nil || len(b) != sha256.Size {
			return Result{}, fmt.Errorf("expected SHA-256 %q is not 64 hex digits", o.SHA256)
		}
	}
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return Result{}, err
	}
	if fi, err := os.Lstat(dir); err == nil && !fi.IsDir() {
		return Result{}, fmt.Errorf("%s exists and is not a directory", dir)
	}
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return Result{}, err
	}
	// Staging beside the target keeps the final rename on one file system.
	stage, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".fetch-")
	if err != nil {
		return Result{}, err
	}
	defer os.RemoveAll(stage)

	archive := filepath.Join(stage, "archive.tar.gz")
	sum, err := download(ctx, src, archive, o.Timeout, o.Limits.Download)
	if err != nil {
		return Result{}, err
	}
	if o.SHA256 != "" && !strings.EqualFold(sum, o.SHA256) {
		return Result{}, fmt.Errorf("%s: SHA-256 is %s, expected %s", src, sum, o.SHA256)
	}
	db := filepath.Join(stage, "db")
	if err := unpack(archive, db, o.Limits); err != nil {
		return Result{}, fmt.Errorf("%s: %w", src, err)
	}
	loaded, err := fingerprint.LoadDir(db)
	if err != nil {
		// LoadDir names the staging directory, which is gone once we return.
		if inner := errors.Unwrap(err); inner != nil {
			err = inner
		}
		return Result{}, fmt.Errorf("%s: the database does not load: %w", src, err)
	}
	report := loaded.Report()
	if report.Technologies == 0 {
		return Result{}, fmt.Errorf("%s: the database defines no technology", src)
	}
	if err := replace(db, dir, filepath.Join(stage, "old")); err != nil {
		return Result{}, err
	}
	return Result{URL: src, SHA256: sum, Report: report}, nil
}

// archiveURL fills the revision into the URL template and checks the result.
func archiveURL(tmpl, rev string) (string, error) {
	if strings.Contains(tmpl, "{rev}") && rev == "" {
		return "", errors.New("the URL needs a revision and none is set")
	}
	s := strings.ReplaceAll(tmpl, "{rev}", url.PathEscape(rev))
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("archive URL: %w", err)
	}
	if (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return "", fmt.Errorf("archive URL %q is not an http(s) URL", s)
	}
	return s, nil
}

// download writes the archive at src to file and returns its SHA-256. It
// follows at most maxRedirects redirects, none from https to http, and
// stops at limit bytes or after timeout.
func download(ctx context.Context, src, file string, timeout time.Duration, limit int64) (string, error) {
	client := &http.Client{
		Timeout: timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > maxRedirects {
				return fmt.Errorf("more than %d redirects", maxRedirects)
			}
			if via[0].URL.Scheme == "https" && req.URL.Scheme != "https" {
				return fmt.Errorf("redirect from https to %s refused", req.URL.Redacted())
			}
			return nil
		},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, src, nil)
	if err != nil {
		return "", err
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", timedOut(err, timeout)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s", src, resp.Status)
	}
	if resp.ContentLength > limit {
		return "", fmt.Errorf("GET %s: the archive is %d bytes, over the limit of %d", src, resp.ContentLength, limit)
	}
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return "", fmt.Errorf("GET %s: %w", src, timedOut(err, timeout))
	}
	if n > limit {
		return "", fmt.Errorf("GET %s: the archive is over the limit of %d bytes", src, limit)
	}
	return hex.EncodeToString(h.Sum(nil)), f.Close()
}

// timedOut names the timeout when err is one, since net/http's wording
// ("Client.Timeout or context cancellation") does not say which limit hit.
func timedOut(err error, timeout time.Duration) error {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("download timed out after %s: %w", timeout, err)
	}
	return err
}

// errTooBig ends a read past a limit.
var errTooBig = errors.New("the decompressed archive is over its size limit (a compression bomb?)")

// capped reads at most left bytes of r, then fails with errTooBig.
type capped struct {
	r    io.Reader
	left int64
}

func (c *capped) Read(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, errTooBig
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

// unpack writes the database files of the .tar.gz archive into dir (which
// it creates) as technologies/*.json and categories.json, the layout
// fingerprint.LoadDir reads. Every other entry is skipped unread.
func unpack(archive, dir string, lim Limits) error {
	f, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return fmt.Errorf("not a .tar.gz archive: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "technologies"), 0o755); err != nil {
		return err
	}
	tr := tar.NewReader(&capped{r: gz, left: lim.Stream})
	var total int64
	var files, techs int
	var cats bool
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("reading the archive: %w", err)
		}
		rel, err := place(h.Name)
		if err != nil {
			return err
		}
		if rel == "" {
			continue
		}
		if h.Typeflag != tar.TypeReg {
			return fmt.Errorf("%s: not a regular file (links are refused)", h.Name)
		}
		if h.Size > lim.File {
			return fmt.Errorf("%s: %d bytes, over the limit of %d per file", h.Name, h.Size, lim.File)
		}
		if total += h.Size; total > lim.Total {
			return fmt.Errorf("the database files are over the limit of %d bytes in all", lim.Total)
		}
		if files++; files > lim.Files {
			return fmt.Errorf("the archive holds over %d database files", lim.Files)
		}
		if err := write(filepath.Join(dir, filepath.FromSlash(rel)), tr); err != nil {
			return fmt.Errorf("%s: %w", h.Name, err)
		}
		if rel == "categories.json" {
			cats = true
		} else {
			techs++
		}
	}
	switch {
	case techs == 0:
		return errors.New("the archive has no src/technologies/*.json")
	case !cats:
		return errors.New("the archive has no src/categories.json")
	}
	return nil
}

// place maps an archive entry to its file in the database: "" for an entry
// that is not part of it. Entries may sit under one top directory, as in
// GitHub's archives (webappanalyzer-<rev>/src/...). A name that would leave
// the archive is an error, whatever the entry.
func place(name string) (string, error) {
	parts := strings.Split(name, "/")
	for _, p := range parts {
		if p == ".." {
			return "", fmt.Errorf("entry %q leaves the archive", name)
		}
	}
	if path.IsAbs(name) {
		return "", fmt.Errorf("entry %q is an absolute path", name)
	}
	parts = strings.Split(path.Clean(name), "/")
	if parts[0] != "src" {
		parts = parts[1:]
	}
	switch {
	case len(parts) == 2 && parts[0] == "src" && parts[1] == "categories.json":
		return "categories.json", nil
	case len(parts) == 3 && parts[0] == "src" && parts[1] == "technologies" &&
		strings.HasSuffix(parts[2], ".json") && !strings.HasPrefix(parts[2], "."):
		return "technologies/" + parts[2], nil
	}
	return "", nil
}

// write creates file (which must not exist: an archive naming a file twice
// is refused) with the rest of r.
func write(file string, r io.Reader) error {
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return errors.New("appears twice in the archive")
		}
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// replace puts dir new in dir's place, moving the old one (if any) to old.
// Two renames on one file system: the old directory is whole until the
// first and the new one whole after the second; should the second fail,
// the old one is put back.
func replace(newDir, dir, old string) error {
	if err := os.Rename(dir, old); err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return os.Rename(newDir, dir)
	}
	if err := os.Rename(newDir, dir); err != nil {
		if back := os.Rename(old, dir); back != nil {
			return fmt.Errorf("%w; and the old database could not be put back: %v", err, back)
		}
		return err
	}
	return nil
}
