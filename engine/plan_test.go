package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/engine/plan"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/agentpack/agentpack/targets"
)

func changeFor(p *plan.Plan, path string) *plan.Change {
	for i := range p.Changes {
		if p.Changes[i].Path.String() == path {
			return &p.Changes[i]
		}
	}
	return nil
}

// TestPlanKinds walks the three states (desired, actual, last applied)
// through each update kind and delete reason.
func TestPlanKinds(t *testing.T) {
	env := testEnv(t)
	repo := codexRepo(t)
	e := engine.New(env, targets.NewSet())
	req := engine.Request{Repo: repo}
	agents := filepath.Join(env.Cwd, "AGENTS.md")
	skill := filepath.Join(env.Cwd, ".agents/skills/s/SKILL.md")

	// Unmanaged existing file → adopt_update.
	mustWrite(t, agents, "mine\n")
	_, p, err := e.Plan(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if c := changeFor(p, agents); c == nil || c.UpdateKind != plan.UpdateAdopt || c.Reason != plan.ReasonUnmanaged {
		t.Fatalf("want adopt_update for %s, got %+v", agents, c)
	}
	if c := changeFor(p, skill); c == nil || c.Op != plan.OpCreate || c.Reason != plan.ReasonMissing {
		t.Fatalf("want create for skill, got %+v", c)
	}
	if _, _, err := e.Deploy(context.Background(), req, true, engine.ApplyOptions{}); apperr.CodeOf(err) != apperr.AdoptConfirmRequired {
		t.Fatalf("want E_ADOPT_CONFIRM_REQUIRED, got %v", err)
	}
	if got := mustRead(t, agents); got != "mine\n" {
		t.Fatalf("refused apply changed the file: %q", got)
	}
	if _, _, err := e.Deploy(context.Background(), req, true, engine.ApplyOptions{Adopt: true}); err != nil {
		t.Fatal(err)
	}

	// In sync → no changes.
	_, p, _ = e.Plan(context.Background(), req)
	if len(p.Changes) != 0 {
		t.Fatalf("want no changes after deploy, got %+v", p.Changes)
	}

	// Desired changes, disk as last applied → managed_update.
	mustWrite(t, filepath.Join(repo, "modules/base/AGENTS.md"), "# base v2\n")
	_, p, _ = e.Plan(context.Background(), req)
	if c := changeFor(p, agents); c == nil || c.UpdateKind != plan.UpdateManaged {
		t.Fatalf("want managed_update, got %+v", c)
	}

	// Hand edit → drifted_update, refused without --force.
	mustWrite(t, agents, "hand edit\n")
	_, p, _ = e.Plan(context.Background(), req)
	if c := changeFor(p, agents); c == nil || c.UpdateKind != plan.UpdateDrifted || c.Reason != plan.ReasonDiffers {
		t.Fatalf("want drifted_update, got %+v", c)
	}
	if _, _, err := e.Deploy(context.Background(), req, true, engine.ApplyOptions{}); apperr.CodeOf(err) != apperr.DriftConflict {
		t.Fatalf("want E_DRIFT_CONFLICT, got %v", err)
	}
	if _, _, err := e.Deploy(context.Background(), req, true, engine.ApplyOptions{Force: true}); err != nil {
		t.Fatal(err)
	}

	// Module removed from the manifest → delete "no longer managed".
	mustWrite(t, filepath.Join(repo, "agentpack.yaml"), codexOnlyManifest[:len(codexOnlyManifest)-len(`  - id: skill:s
    type: skill
    tags: [base]
    source: {local_path: {path: modules/s}}
`)])
	_, p, err = e.Plan(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if c := changeFor(p, skill); c == nil || c.Op != plan.OpDelete || c.Reason != plan.ReasonNoLonger {
		t.Fatalf("want delete no longer managed, got %+v", c)
	}
	// Edited and no longer desired → delete "edited since last deploy", needs --force.
	mustWrite(t, skill, "edited\n")
	_, p, _ = e.Plan(context.Background(), req)
	if c := changeFor(p, skill); c == nil || c.Reason != plan.ReasonEdited {
		t.Fatalf("want delete edited since last deploy, got %+v", c)
	}
	if _, _, err := e.Deploy(context.Background(), req, true, engine.ApplyOptions{}); apperr.CodeOf(err) != apperr.DriftConflict {
		t.Fatalf("want E_DRIFT_CONFLICT for edited delete, got %v", err)
	}
}

// TestDryRunSystemWritesNothing proves the recording System records every
// mutation and touches no file.
func TestDryRunSystemWritesNothing(t *testing.T) {
	dir := t.TempDir()
	path := fsys.AbsPath(filepath.Join(dir, "a", "b.txt"))
	s := fsys.NewDryRunSystem(fsys.NewRealSystem(fsys.RealSystemOptions{}))
	if err := s.WriteFile(path, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := s.ReadFile(path); err != nil || string(got) != "x" {
		t.Fatalf("dry run should read back its own write, got %q %v", got, err)
	}
	if err := s.Remove(path); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReadFile(path); err == nil {
		t.Fatal("dry run should see its own removal")
	}
	if _, err := os.Lstat(filepath.Join(dir, "a")); err == nil {
		t.Fatal("dry run created a directory")
	}
	if ops := s.Ops(); len(ops) != 2 || ops[0].Kind != fsys.OpWrite || ops[1].Kind != fsys.OpRemove {
		t.Fatalf("ops not recorded: %+v", ops)
	}
}

// TestRealSystemRefusesSymlink checks that a write never follows a link.
func TestRealSystemRefusesSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target.txt")
	link := filepath.Join(dir, "link.txt")
	mustWrite(t, target, "keep\n")
	if err := symlink(target, link); err != nil {
		t.Skip("symlinks unsupported:", err)
	}
	err := fsys.NewRealSystem(fsys.RealSystemOptions{}).WriteFile(fsys.AbsPath(link), []byte("x"), 0o644)
	if apperr.CodeOf(err) != apperr.IOInvalidPath {
		t.Fatalf("want E_IO_INVALID_PATH, got %v", err)
	}
	if mustRead(t, target) != "keep\n" {
		t.Fatal("write went through the link")
	}
}

// TestDryRunMatchesApply runs the transaction against the recording System,
// then for real, and checks both touched the same paths in the same order.
func TestDryRunMatchesApply(t *testing.T) {
	env := testEnv(t)
	repo := codexRepo(t)
	e := engine.New(env, targets.NewSet())
	req := engine.Request{Repo: repo}
	st, p, err := e.Plan(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	ops, err := e.DryRun(context.Background(), st, p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(env.Cwd, "AGENTS.md")); err == nil {
		t.Fatal("dry run wrote a file")
	}
	_, d, err := e.Deploy(context.Background(), req, true, engine.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := e.Snapshot(context.Background(), d.SnapshotID)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, f := range snap.Files {
		want = append(want, f.Path)
	}
	var got []string
	for _, op := range ops {
		got = append(got, op.Path.String())
	}
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("dry run touched\n%s\napply touched\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
