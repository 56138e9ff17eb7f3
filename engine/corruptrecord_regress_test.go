package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/targets"
)

// TestRollbackLastWithDamagedNewestRecord: when the newest snapshot record
// is damaged, `rollback --last` refuses (E_SNAPSHOT_CORRUPTED) instead of
// undoing the previous snapshot it can still read.
func TestRollbackLastWithDamagedNewestRecord(t *testing.T) {
	env := testEnv(t)
	repo := codexRepo(t)
	e := engine.New(env, targets.NewSet())
	req := engine.Request{Repo: repo}
	agents := filepath.Join(env.Cwd, "AGENTS.md")
	if _, _, err := e.Deploy(context.Background(), req, true, engine.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(repo, "modules/base/AGENTS.md"), "# v2\n")
	_, d2, err := e.Deploy(context.Background(), req, true, engine.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rec := filepath.Join(env.AgentpackHome, "state", "snapshots", d2.SnapshotID+".json")
	if err := os.WriteFile(rec, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	rb, warnings, err := e.Rollback(context.Background(), engine.RollbackOptions{Last: true})
	if err != nil {
		return // refusing is the safe answer
	}
	if _, serr := os.Stat(agents); serr != nil {
		t.Fatalf("rollback --last with the newest record (%s) damaged undid the older deploy instead: AGENTS.md is gone (%v); data %+v, warnings %q",
			d2.SnapshotID, serr, rb, warnings)
	}
}
