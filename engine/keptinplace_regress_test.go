package engine_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/targets"
)

// TestRollbackToBeforeARepoFollowedAHandEdit: a deployed file edited by
// hand, then the repo changed to match it (what `evolve propose` leads
// to), is deployed without being written: only its manifest entry moves.
// That deploy's snapshot still names the file, so `rollback --to` the
// deploy before it puts back the bytes that one wrote, and `rollback
// --last` of it leaves the file as the hand edit made it.
func TestRollbackToBeforeARepoFollowedAHandEdit(t *testing.T) {
	ctx := context.Background()
	env := testEnv(t)
	repo := codexRepo(t)
	e := engine.New(env, targets.NewSet())
	req := engine.Request{Repo: repo}
	src := filepath.Join(repo, "modules", "s", "extra.txt")
	deployed := filepath.Join(env.Cwd, ".agents", "skills", "s", "extra.txt")

	_, first, err := e.Deploy(ctx, req, true, engine.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	original := mustRead(t, deployed)
	edited := original + "edited by hand\n"
	mustWrite(t, deployed, edited)
	mustWrite(t, src, edited)
	_, p, err := e.Plan(ctx, req)
	if err != nil || len(p.Changes) != 0 {
		t.Fatalf("the plan of a repo that matches the hand edit: %v %+v", err, p)
	}
	_, followed, err := e.Deploy(ctx, req, true, engine.ApplyOptions{})
	if err != nil || !followed.Applied {
		t.Fatalf("the deploy recording the hand edit: %v %+v", err, followed)
	}
	detail, err := e.Snapshot(ctx, followed.SnapshotID)
	if err != nil {
		t.Fatal(err)
	}
	named := false
	for _, f := range detail.Files {
		named = named || f.Path == deployed
	}
	if !named {
		t.Fatalf("the snapshot of the deploy that took the hand edit does not name %s: %+v", deployed, detail.Files)
	}
	if got := mustRead(t, deployed); got != edited {
		t.Fatalf("the deploy rewrote the file: %q", got)
	}

	if _, _, err := e.Rollback(ctx, engine.RollbackOptions{Last: true}); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, deployed); got != edited {
		t.Fatalf("rollback --last of that deploy left %q, want the hand edit %q", got, edited)
	}
	if _, _, err := e.Rollback(ctx, engine.RollbackOptions{To: first.SnapshotID}); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, deployed); got != original {
		t.Fatalf("rollback --to the first deploy left %q, want what it wrote, %q", got, original)
	}
}

// TestFileKeptInPlaceEditedBeforeTheDeployRecordsIt: a file the deploy
// only records (the repo now matches its hand edit) that is edited again
// after the plan and before the deploy reads it to save stops the deploy
// with E_DRIFT_CONFLICT changed_since_plan: its snapshot would otherwise
// name bytes it does not hold. Nothing is written and no snapshot made.
func TestFileKeptInPlaceEditedBeforeTheDeployRecordsIt(t *testing.T) {
	ctx := context.Background()
	env, e, req, repo := deployedCodexRepo(t)
	deployed := filepath.Join(env.Cwd, ".agents", "skills", "s", "extra.txt")
	edited := mustRead(t, deployed) + "edited by hand\n"
	mustWrite(t, deployed, edited)
	mustWrite(t, filepath.Join(repo, "modules", "s", "extra.txt"), edited)
	before, _, err := e.Snapshots(ctx)
	if err != nil {
		t.Fatal(err)
	}
	e.Checkpoint = func(phase string) {
		if phase == "deciding" {
			mustWrite(t, deployed, "edited again\n")
		}
	}
	_, _, err = e.Deploy(ctx, req, true, engine.ApplyOptions{})
	wantCode(t, err, apperr.DriftConflict, deployed)
	if got := apperr.As(err).Details["reason_code"]; got != "changed_since_plan" {
		t.Errorf("reason_code = %v", got)
	}
	if got := mustRead(t, deployed); got != "edited again\n" {
		t.Errorf("the file holds %q, want the second edit kept", got)
	}
	if after, _, err := e.Snapshots(ctx); err != nil || len(after) != len(before) {
		t.Errorf("snapshots %d -> %d (%v), want none made", len(before), len(after), err)
	}
}
