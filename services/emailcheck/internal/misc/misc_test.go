package misc

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/surveyor/surveyor/pkg/job"
)

func TestCheckBuiltin(t *testing.T) {
	l, err := Load("")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		local, domain string
		want          job.EmailMisc
	}{
		{"jane", "gmail.com", job.EmailMisc{FreeProvider: true}},
		{"jane", "example.com", job.EmailMisc{}},
		{"jane", "mailinator.com", job.EmailMisc{Disposable: true}},
		{"jane", "eu.mailinator.com", job.EmailMisc{Disposable: true}},
		{"jane", "notmailinator.com", job.EmailMisc{}},
		{"info", "example.com", job.EmailMisc{RoleAccount: true}},
		{"Sales+eu", "example.com", job.EmailMisc{RoleAccount: true}},
		{"customer.service", "example.com", job.EmailMisc{RoleAccount: true}},
		{"no-reply", "example.com", job.EmailMisc{RoleAccount: true}},
		{"Postmaster", "yahoo.com", job.EmailMisc{RoleAccount: true, FreeProvider: true}},
		{"infosec.jane", "example.com", job.EmailMisc{}},
		{"jane", "gmial.com", job.EmailMisc{Suggestion: "jane@gmail.com"}},
		{"jane", "gmai.com", job.EmailMisc{Suggestion: "jane@gmail.com"}},
		{"jane", "hotmial.com", job.EmailMisc{Suggestion: "jane@hotmail.com"}},
		{"jane", "yahoo.con", job.EmailMisc{Suggestion: "jane@yahoo.com"}},
		{"jane", "outlok.com", job.EmailMisc{Suggestion: "jane@outlook.com"}},
		{"jane", "gooogleemail.com", job.EmailMisc{Suggestion: "jane@googlemail.com"}},
		{"jane", "example.con", job.EmailMisc{Suggestion: "jane@example.com"}},
		{"jane", "example.ogr", job.EmailMisc{Suggestion: "jane@example.org"}},
		{"jane", "example.nett", job.EmailMisc{Suggestion: "jane@example.net"}},
		{"jane", "example.new", job.EmailMisc{}},  // a real TLD
		{"jane", "example.co", job.EmailMisc{}},   // two letters: a country code
		{"jane", "example.cm", job.EmailMisc{}},   // two letters: a country code
		{"jane", "example.tech", job.EmailMisc{}}, // far from every common TLD
		{"jane", "mail.com", job.EmailMisc{FreeProvider: true}},
		{"jane", "gmx.de", job.EmailMisc{FreeProvider: true}},
	}
	for _, c := range cases {
		if got := l.Check(c.local, c.domain); got != c.want {
			t.Errorf("Check(%q, %q) = %+v, want %+v", c.local, c.domain, got, c.want)
		}
	}
}

func TestLoadExtensionDir(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("disposable.txt", "# ours\nthrowaway.example\n!mailinator.com\n")
	write("role.txt", "Front-Desk\n")
	write("free.txt", "freemail.example # a new provider\n")
	l, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !l.Check("a", "x.throwaway.example").Disposable {
		t.Error("added disposable domain not matched")
	}
	if l.Check("a", "mailinator.com").Disposable {
		t.Error("removed built-in disposable domain still matched")
	}
	if !l.Check("a", "yopmail.com").Disposable {
		t.Error("built-in disposable domain lost after extension")
	}
	if !l.Check("front_desk", "example.com").RoleAccount {
		t.Error("added role account not matched")
	}
	if !l.Check("a", "freemail.example").FreeProvider {
		t.Error("added free provider not matched")
	}
	if _, err := Load(filepath.Join(dir, "disposable.txt")); err == nil {
		t.Error("a file given as the lists directory was accepted")
	}
}

func TestDistance(t *testing.T) {
	cases := []struct {
		a, b  string
		limit int
		want  int
	}{
		{"gmail.com", "gmail.com", 2, 0},
		{"gmial.com", "gmail.com", 2, 1},
		{"gmai.com", "gmail.com", 2, 1},
		{"gmaail.com", "gmail.com", 2, 1},
		{"gnail.con", "gmail.com", 2, 2},
		{"abc", "xyz", 5, 3},
		{"abc", "xyz", 1, 2},
		{"a", "abcdef", 2, 3},
	}
	for _, c := range cases {
		if got := distance(c.a, c.b, c.limit); got != c.want {
			t.Errorf("distance(%q, %q, %d) = %d, want %d", c.a, c.b, c.limit, got, c.want)
		}
	}
}
