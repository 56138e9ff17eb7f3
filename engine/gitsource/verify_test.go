package gitsource

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agentpack/agentpack/engine/lockfile"
	"github.com/agentpack/agentpack/internal/apperr"
)

func TestVerifySubdir(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, body string) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("skills/review/SKILL.md", "skill\n")
	write("skills/review/ref/a.md", "a\n")
	write(MarkerFile, "{}")
	write("prompts/p.md", "p\n")

	locked, err := lockfile.HashDir(filepath.Join(dir, "skills/review"))
	if err != nil {
		t.Fatal(err)
	}
	if err := VerifySubdir(dir, "skills/review", locked); err != nil {
		t.Fatalf("unchanged: %v", err)
	}
	whole, _ := lockfile.HashDir(dir)
	if err := VerifySubdir(dir, "", whole); err != nil {
		t.Fatalf("whole checkout: %v", err)
	}
	single, _ := lockfile.HashDir(filepath.Join(dir, "prompts/p.md"))
	if err := VerifySubdir(dir, "prompts/p.md", single); err != nil {
		t.Fatalf("single file: %v", err)
	}

	check := func(name, subdir string, want []lockfile.File, path, reason string) {
		t.Helper()
		err := VerifySubdir(dir, subdir, want)
		e := apperr.As(err)
		if e.Code != apperr.ChecksumMismatch || e.Details["path"] != path || (reason != "" && e.Details["reason"] != reason) {
			t.Errorf("%s: %v (details %v)", name, err, e.Details)
		}
	}
	write("skills/review/ref/a.md", "changed\n")
	check("modified", "skills/review", locked, "ref/a.md", "modified")
	write("skills/review/ref/a.md", "a\n")

	write("skills/review/new.md", "n\n")
	check("unexpected", "skills/review", locked, "new.md", "unexpected")
	os.Remove(filepath.Join(dir, "skills/review/new.md"))

	os.Remove(filepath.Join(dir, "skills/review/SKILL.md"))
	check("missing", "skills/review", locked, "SKILL.md", "missing")

	check("missing subdir", "skills/gone", locked, filepath.Join(dir, "skills/gone"), "")

	if err := VerifySubdir(dir, "../x", locked); apperr.CodeOf(err) != apperr.SourceURLInvalid {
		t.Errorf("escaping subdir: %v", err)
	}
}
