package engine

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agentpack/agentpack/engine/overlay"
	"github.com/agentpack/agentpack/engine/target"
	"github.com/agentpack/agentpack/internal/fsys"
)

// TestProjectIDFollowsOrigin checks the project id: the origin URL when
// the project has one (the same for every clone, ssh or https), else the
// project's real path, even through a symlinked folder.
func TestProjectIDFollowsOrigin(t *testing.T) {
	dir := t.TempDir()
	clone := filepath.Join(dir, "clone")
	if err := os.MkdirAll(filepath.Join(clone, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := "[core]\n\tbare = false\n[remote \"upstream\"]\n\turl = https://example.com/other\n[remote \"origin\"]\n\turl = git@github.com:Org/Repo.git\n"
	if err := os.WriteFile(filepath.Join(clone, ".git", "config"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	e := New(Env{Home: dir, Cwd: filepath.Join(clone)}, target.NewSet())
	if got, want := e.ProjectID(), overlay.ProjectID("https://github.com/org/repo", "/elsewhere"); got != want {
		t.Errorf("with origin: %s, want %s", got, want)
	}

	plain := filepath.Join(dir, "plain")
	if err := os.MkdirAll(filepath.Join(plain, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(plain, link); err != nil {
		t.Skip("no symlinks:", err)
	}
	viaLink := New(Env{Home: dir, Cwd: link}, target.NewSet()).ProjectID()
	direct := New(Env{Home: dir, Cwd: plain}, target.NewSet()).ProjectID()
	real, _ := filepath.EvalSymlinks(plain)
	if viaLink != direct || direct != overlay.ProjectID("", fsys.AbsPath(real)) {
		t.Errorf("without origin: via link %s, direct %s", viaLink, direct)
	}
}
