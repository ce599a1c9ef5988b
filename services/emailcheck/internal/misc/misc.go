// Package misc answers the questions about an address that need no network:
// is the domain a throwaway service or a free provider, is the local part a
// role account, and does the domain look like a typo of a popular one. The
// facts live in data files (services/emailcheck/data) that operators can
// extend from a directory without a rebuild.
package misc

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/surveyor/surveyor/pkg/job"
	"github.com/surveyor/surveyor/services/emailcheck/data"
)

// List file names, the same in the embedded data and in an extension directory.
const (
	fileDisposable = "disposable.txt"
	fileFree       = "free.txt"
	fileRole       = "role.txt"
	filePopular    = "popular.txt"
	fileTLDs       = "tlds.txt"
)

// maxListBytes bounds one list file read from an operator's directory.
const maxListBytes = 16 << 20

// commonTLDs are the endings a mistyped top-level domain is corrected to.
var commonTLDs = []string{"com", "net", "org", "edu", "gov", "info", "biz"}

// Lists holds the loaded lists. It is read-only after Load, so one value is
// shared by all validations.
type Lists struct {
	disposable map[string]bool
	free       map[string]bool
	role       map[string]bool
	popular    []string
	tlds       map[string]bool
}

// Load reads the embedded lists and, when dir is not "", the files of the
// same names in dir on top of them. In an extension file a line "x" adds x
// and "!x" removes a built-in x (for a false positive). Missing files in
// dir are fine; unreadable ones are an error.
func Load(dir string) (*Lists, error) {
	l := &Lists{}
	popular := map[string]bool{}
	lists := []struct {
		name string
		set  *map[string]bool
		key  func(string) string // how entries are compared
	}{
		{fileDisposable, &l.disposable, strings.ToLower},
		{fileFree, &l.free, strings.ToLower},
		{fileRole, &l.role, roleKey},
		{filePopular, &popular, strings.ToLower},
		{fileTLDs, &l.tlds, strings.ToLower},
	}
	for _, list := range lists {
		*list.set = map[string]bool{}
		f, err := data.FS.Open(list.name)
		if err != nil {
			return nil, fmt.Errorf("built-in list %s: %w", list.name, err)
		}
		err = readList(f, list.name, *list.set, list.key)
		f.Close()
		if err != nil {
			return nil, err
		}
		if dir == "" {
			continue
		}
		path := filepath.Join(dir, list.name)
		f2, err := os.Open(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		err = readList(io.LimitReader(f2, maxListBytes), path, *list.set, list.key)
		f2.Close()
		if err != nil {
			return nil, err
		}
	}
	for d := range popular {
		l.popular = append(l.popular, d)
	}
	sort.Strings(l.popular)
	return l, nil
}

// readList adds (or with "!", removes) one entry per line.
func readList(r io.Reader, name string, set map[string]bool, key func(string) string) error {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		remove := strings.HasPrefix(line, "!")
		if line = key(strings.TrimPrefix(line, "!")); line == "" {
			continue
		}
		if remove {
			delete(set, line)
		} else {
			set[line] = true
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("list %s: %w", name, err)
	}
	return nil
}

// Check looks at a syntactically valid address: local part as written,
// domain lower-case A-labels.
func (l *Lists) Check(local, domain string) job.EmailMisc {
	return job.EmailMisc{
		Disposable:   l.isDisposable(domain),
		RoleAccount:  l.role[roleKey(local)],
		FreeProvider: l.free[domain],
		Suggestion:   l.suggest(local, domain),
	}
}

// isDisposable matches the domain or any parent of it, since throwaway
// services often hand out subdomains.
func (l *Lists) isDisposable(domain string) bool {
	for d := domain; d != ""; {
		if l.disposable[d] {
			return true
		}
		i := strings.IndexByte(d, '.')
		if i < 0 {
			break
		}
		d = d[i+1:]
	}
	return false
}

// roleKey reduces a local part to how role names are listed: lower case,
// no +tag, no separators (customer.service and customer-service match
// customerservice).
func roleKey(local string) string {
	local = strings.ToLower(strings.Trim(local, `"`))
	if i := strings.IndexByte(local, '+'); i > 0 {
		local = local[:i]
	}
	return separators.Replace(local)
}

var separators = strings.NewReplacer(".", "", "-", "", "_", "")

// suggest proposes a corrected address when the domain is a near miss of a
// popular mail domain (gmial.com) or has a mistyped common top-level domain
// (example.con). Known domains get no suggestion.
func (l *Lists) suggest(local, domain string) string {
	if l.free[domain] || l.disposable[domain] {
		return ""
	}
	for _, p := range l.popular {
		if p == domain {
			return ""
		}
	}
	best, bestDist := "", 3
	for _, p := range l.popular {
		limit := 1
		if len(p) >= 10 && len(domain) >= 10 {
			limit = 2
		}
		d := distance(domain, p, limit)
		if d <= limit && d < bestDist { // ties keep the first in sorted order
			best, bestDist = p, d
		}
	}
	if best != "" {
		return local + "@" + best
	}
	dot := strings.LastIndexByte(domain, '.')
	tld := domain[dot+1:]
	if len(tld) < 3 || l.tlds[tld] {
		return ""
	}
	for _, c := range commonTLDs {
		if distance(tld, c, 1) <= 1 {
			return local + "@" + domain[:dot+1] + c
		}
	}
	return ""
}

// distance is the optimal-string-alignment edit distance of a and b
// (insertions, deletions, substitutions and swaps of neighbours), cut short
// at limit+1 since callers only care about small distances.
func distance(a, b string, limit int) int {
	if d := len(a) - len(b); d > limit || -d > limit {
		return limit + 1
	}
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			v := min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				v = min(v, prev2[j-2]+1)
			}
			cur[j] = v
			rowMin = min(rowMin, v)
		}
		if rowMin > limit {
			return limit + 1
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
