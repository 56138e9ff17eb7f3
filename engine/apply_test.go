package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/targets"
)

// TestWriteErrorRollsBack makes one write fail mid-apply (a parent path is a
// file) and checks every other file is back to its previous state.
func TestWriteErrorRollsBack(t *testing.T) {
	env := testEnv(t)
	repo := codexRepo(t)
	e := engine.New(env, targets.NewSet())
	agents := filepath.Join(env.Cwd, "AGENTS.md")
	mustWrite(t, agents, "mine\n")
	// .agents/skills is a file: the skill's writes must fail.
	mustWrite(t, filepath.Join(env.Cwd, ".agents", "skills"), "not a dir\n")
	_, _, err := e.Deploy(context.Background(), engine.Request{Repo: repo}, true, engine.ApplyOptions{Adopt: true})
	if code := apperr.CodeOf(err); !strings.HasPrefix(string(code), "E_IO_") {
		t.Fatalf("want an E_IO_* error, got %v", err)
	}
	if got := mustRead(t, agents); got != "mine\n" {
		t.Fatalf("AGENTS.md not rolled back: %q", got)
	}
	if _, err := os.Stat(filepath.Join(env.AgentpackHome, "state", "journal.json")); !os.IsNotExist(err) {
		t.Fatalf("journal left behind: %v", err)
	}
	entries, _ := os.ReadDir(env.Cwd)
	for _, ent := range entries {
		if strings.Contains(ent.Name(), "agentpack-tmp") || strings.HasPrefix(ent.Name(), ".agentpack.manifest") {
			t.Fatalf("left %s behind", ent.Name())
		}
	}
}

// TestRollbackToRestoresExactBytes deploys v1 and v2, then returns to v1.
func TestRollbackToRestoresExactBytes(t *testing.T) {
	env := testEnv(t)
	repo := codexRepo(t)
	e := engine.New(env, targets.NewSet())
	req := engine.Request{Repo: repo}
	agents := filepath.Join(env.Cwd, "AGENTS.md")
	_, d1, err := e.Deploy(context.Background(), req, true, engine.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	v1 := mustRead(t, agents)
	mustWrite(t, filepath.Join(repo, "modules/base/AGENTS.md"), "# v2\n")
	mustWrite(t, filepath.Join(repo, "modules/s/new.txt"), "new in v2\n")
	if _, _, err := e.Deploy(context.Background(), req, true, engine.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	newFile := filepath.Join(env.Cwd, ".agents/skills/s/new.txt")
	if _, err := os.Stat(newFile); err != nil {
		t.Fatal("v2 file missing:", err)
	}
	rb, _, err := e.Rollback(context.Background(), engine.RollbackOptions{To: d1.SnapshotID})
	if err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, agents); got != v1 {
		t.Fatalf("want v1 %q, got %q", v1, got)
	}
	if _, err := os.Stat(newFile); !os.IsNotExist(err) {
		t.Fatal("file created by v2 survived the rollback")
	}
	if rb.RolledBackTo == nil || *rb.RolledBackTo != d1.SnapshotID || rb.Restored != 1 || rb.Removed != 1 {
		t.Fatalf("unexpected rollback data %+v", rb)
	}
	// The rollback is a snapshot too: undoing it brings v2 back.
	if _, _, err := e.Rollback(context.Background(), engine.RollbackOptions{Last: true}); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, agents); got != "# v2\n" {
		t.Fatalf("undoing the rollback should restore v2, got %q", got)
	}
	// Status after all that is clean.
	_, st, err := e.Status(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Drift) != 0 {
		t.Fatalf("want no drift, got %+v", st.Drift)
	}
}

// TestStatCacheSeesEdits makes sure a cached hash never hides an edit.
func TestStatCacheSeesEdits(t *testing.T) {
	env, e, req, _ := deployedCodexRepo(t)
	for i := 0; i < 2; i++ { // warm the cache
		if _, _, err := e.Status(context.Background(), req, nil); err != nil {
			t.Fatal(err)
		}
	}
	agents := filepath.Join(env.Cwd, "AGENTS.md")
	orig := mustRead(t, agents)
	mustWrite(t, agents, strings.ToUpper(orig)) // same size, new bytes
	_, st, err := e.Status(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Drift) != 1 || st.Drift[0].Kind != engine.DriftModified {
		t.Fatalf("want one modified, got %+v", st.Drift)
	}
}

// TestSnapshotIDShortcuts: "last" and unique prefixes name a snapshot.
func TestSnapshotIDShortcuts(t *testing.T) {
	env := testEnv(t)
	e := engine.New(env, targets.NewSet())
	_, d, err := e.Deploy(context.Background(), engine.Request{Repo: codexRepo(t)}, true, engine.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"last", d.SnapshotID[:15], d.SnapshotID} {
		s, err := e.Snapshot(context.Background(), id)
		if err != nil || s.ID != d.SnapshotID {
			t.Fatalf("Snapshot(%q) = %+v, %v", id, s, err)
		}
	}
	if _, err := e.Snapshot(context.Background(), "1999"); apperr.CodeOf(err) != apperr.SnapshotNotFound {
		t.Fatalf("want E_SNAPSHOT_NOT_FOUND, got %v", err)
	}
}

// Once a snapshot's record is saved, the journal copy beside its saved
// bytes is gone too: the record supersedes it, and it was as large. An
// apply that crashed after saving its record loses its copy when the next
// command finishes it.
func TestJournalCopyGoesWithTheJournal(t *testing.T) {
	copies := func(t *testing.T, env engine.Env) []string {
		t.Helper()
		found, err := filepath.Glob(filepath.Join(env.AgentpackHome, "state", "snapshots", "*", "journal.json"))
		if err != nil {
			t.Fatal(err)
		}
		return found
	}
	env, e, req, repo := deployedCodexRepo(t)
	if got := copies(t, env); len(got) != 0 {
		t.Fatalf("journal copies left after a deploy: %v", got)
	}
	mustWrite(t, filepath.Join(repo, "modules/s/extra.txt"), "x2\n")
	deployDyingAt(t, e, req, "record saved")
	if got := copies(t, env); len(got) != 1 {
		t.Fatalf("setup: %d journal copies after the crash, want 1", len(got))
	}
	if _, _, err := engine.New(env, targets.NewSet()).Snapshots(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := copies(t, env); len(got) != 0 {
		t.Errorf("journal copies left after the next command: %v", got)
	}
}

// deployDyingAt runs a deploy with e that stops dead at the writer's
// checkpoint phase, as a killed process would, leaving what it did so far
// for the next command to recover.
func deployDyingAt(t *testing.T, e *engine.Engine, req engine.Request, phase string) {
	t.Helper()
	type crash struct{}
	e.Checkpoint = func(p string) {
		if p == phase {
			panic(crash{})
		}
	}
	defer func() {
		e.Checkpoint = nil
		if r := recover(); r != (crash{}) {
			t.Fatalf("the deploy did not stop at %q: %v", phase, r)
		}
	}()
	_, _, _ = e.Deploy(context.Background(), req, true, engine.ApplyOptions{})
}
