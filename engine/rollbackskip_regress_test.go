package engine_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/targets"
)

// TestRollbackToRollbackThatSkippedAFile: a rollback records the files
// that already had the wanted bytes as well (Before == After), so a later
// `rollback --to <that rollback>` restores exactly the state right after it
// and status agrees with the restored manifest.
func TestRollbackToRollbackThatSkippedAFile(t *testing.T) {
	env := testEnv(t)
	repo := codexRepo(t)
	e := engine.New(env, targets.NewSet())
	req := engine.Request{Repo: repo}
	agents := filepath.Join(env.Cwd, "AGENTS.md")
	src := filepath.Join(repo, "modules/base/AGENTS.md")

	_, d1, err := e.Deploy(context.Background(), req, true, engine.ApplyOptions{}) // AGENTS.md = v1
	if err != nil {
		t.Fatal(err)
	}
	v1 := mustRead(t, agents)
	mustWrite(t, src, "# v2\n")
	if _, _, err := e.Deploy(context.Background(), req, true, engine.ApplyOptions{}); err != nil { // v2
		t.Fatal(err)
	}
	mustWrite(t, agents, v1) // the user puts v1 back by hand
	r, _, err := e.Rollback(context.Background(), engine.RollbackOptions{To: d1.SnapshotID})
	if err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, agents); got != v1 {
		t.Fatalf("setup: after rollback to d1 want v1, got %q", got)
	}
	if _, _, err := e.Deploy(context.Background(), req, true, engine.ApplyOptions{}); err != nil { // v2 again
		t.Fatal(err)
	}
	if _, _, err := e.Rollback(context.Background(), engine.RollbackOptions{To: r.EventSnapshotID}); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, agents); got != v1 {
		_, st, _ := e.Status(context.Background(), req, nil)
		t.Fatalf("rollback --to %s (right after it AGENTS.md was %q) left %q; status drift %+v", r.EventSnapshotID, v1, got, st.Drift)
	}
}
