package mcpserver

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentpack/agentpack/engine/overlay"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// commitRepo makes dir a git repository with everything in it committed.
func commitRepo(t *testing.T, dir string) *git.Repository {
	t.Helper()
	repo, err := git.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	if err := wt.AddWithOptions(&git.AddOptions{All: true}); err != nil {
		t.Fatal(err)
	}
	sig := &object.Signature{Name: "test", Email: "test@agentpack.invalid", When: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	if _, err := wt.Commit("seed", &git.CommitOptions{Author: sig}); err != nil {
		t.Fatal(err)
	}
	return repo
}

// TestEvolveTools drives evolve_propose and evolve_restore through a real
// client and server: a hand edit becomes an overlay commit on a new
// branch, and a deleted file comes back.
func TestEvolveTools(t *testing.T) {
	te := newTestEnv(t)
	repo := commitRepo(t, te.Repo)
	cs := connect(t, te.server(t, allowWrite), "2025-11-25")
	dep := callTool(t, cs, "deploy", M{"target": "codex"})
	if !dep.OK {
		t.Fatalf("deploy: %s", dep.raw)
	}
	if e := callTool(t, cs, "deploy_apply", M{"target": "codex", "confirm_token": dep.Data["confirm_token"], "yes": true}); !e.OK {
		t.Fatalf("deploy_apply: %s", e.raw)
	}
	prompt := filepath.Join(te.CodexHome, "prompts", "review.md")
	edited := "Review it the way I like.\n"
	if err := os.WriteFile(prompt, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}

	if e := callTool(t, cs, "evolve_propose", M{"target": "codex"}); e.OK || e.code() != "E_CONFIRM_REQUIRED" {
		t.Fatalf("evolve_propose without yes: %s", e.raw)
	}
	e := callTool(t, cs, "evolve_propose", M{"target": "codex", "branch": "evolve/mcp", "yes": true})
	if !e.OK || e.Data["created"] != true || e.Data["branch"] != "evolve/mcp" {
		t.Fatalf("evolve_propose: %s", e.raw)
	}
	ref, err := repo.Reference(plumbing.NewBranchReferenceName("evolve/mcp"), true)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := repo.CommitObject(ref.Hash())
	f, err := c.File("overlays/" + overlay.FSKey("prompt:review") + "/review.md")
	if err != nil {
		t.Fatalf("the branch has no overlay file: %v", err)
	}
	if got, _ := f.Contents(); got != edited {
		t.Errorf("overlay file = %q, want %q", got, edited)
	}

	if err := os.Remove(prompt); err != nil {
		t.Fatal(err)
	}
	e = callTool(t, cs, "evolve_restore", M{"target": "codex", "yes": true})
	if !e.OK || e.Data["reason"] != "restored" {
		t.Fatalf("evolve_restore: %s", e.raw)
	}
	if _, err := os.Stat(prompt); err != nil {
		t.Errorf("evolve_restore did not recreate %s: %v", prompt, err)
	}
}
