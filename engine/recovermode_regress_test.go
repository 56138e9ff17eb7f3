package engine_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/internal/fsys"
)

// failAgentsSys is the real filesystem, except that writing any AGENTS.md
// fails: the apply dies part-way, after its other files were written.
type failAgentsSys struct{ fsys.System }

func (s failAgentsSys) WriteFile(path fsys.AbsPath, data []byte, perm fs.FileMode) error {
	if path.Base() == "AGENTS.md" {
		return errors.New("injected failure writing " + path.String())
	}
	return s.System.WriteFile(path, data, perm)
}

// TestRecoverRestoresModeOfModeOnlyChange: an apply that changes only a
// file's mode (chmod +x) and then fails is rolled back to the old mode too,
// not just to the old bytes.
func TestRecoverRestoresModeOfModeOnlyChange(t *testing.T) {
	env, e, req, repo := deployedCodexRepo(t)
	deployed := filepath.Join(env.Cwd, ".agents", "skills", "s", "extra.txt")
	if fi, err := os.Stat(deployed); err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("setup: %v %v", fi, err)
	}
	if err := os.Chmod(filepath.Join(repo, "modules", "s", "extra.txt"), 0o755); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(repo, "modules", "base", "AGENTS.md"), "# base v2\n")
	_, p, err := e.Plan(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Changes) != 2 {
		t.Fatalf("setup: want two updates, got %+v", p.Changes)
	}

	e.Sys = failAgentsSys{e.Sys}
	_, _, err = e.Deploy(context.Background(), req, true, engine.ApplyOptions{})
	if err == nil || !strings.Contains(err.Error(), "injected") {
		t.Fatalf("want the injected failure, got %v", err)
	}
	if _, err := os.Stat(filepath.Join(env.AgentpackHome, "state", "journal.json")); !os.IsNotExist(err) {
		t.Fatalf("journal left behind: %v", err)
	}
	fi, err := os.Stat(deployed)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o644 {
		t.Fatalf("partial apply rolled back but %s kept mode %v (want 0644); no snapshot records the change", deployed, fi.Mode().Perm())
	}
}

// TestRollbackRestoresTheModeTheDeployReplaced: the mode a deploy records
// for a file it replaces is the one the file had (the plan's look), not
// the one the deploy gives it: a rollback puts back a user's 0600.
func TestRollbackRestoresTheModeTheDeployReplaced(t *testing.T) {
	env, e, req, repo := deployedCodexRepo(t)
	deployed := filepath.Join(env.Cwd, ".agents", "skills", "s", "extra.txt")
	if err := os.Chmod(deployed, 0o600); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(repo, "modules", "s", "extra.txt"), "x v2\n")
	if _, _, err := e.Deploy(context.Background(), req, true, engine.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(deployed); err != nil || fi.Mode().Perm() != 0o644 || mustRead(t, deployed) != "x v2\n" {
		t.Fatalf("setup: the deploy left %v %v", fi, err)
	}
	if _, _, err := e.Rollback(context.Background(), engine.RollbackOptions{Last: true}); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(deployed)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 || mustRead(t, deployed) != "x\n" {
		t.Fatalf("after the rollback %s has mode %v and %q, want 0600 and the old bytes", deployed, fi.Mode().Perm(), mustRead(t, deployed))
	}
}
