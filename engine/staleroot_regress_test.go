package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/engine/plan"
	"github.com/agentpack/agentpack/targets"
)

// TestDisabledOutputIsCleanedUp: when an output is turned off (or moved
// with repo_skills_dir) after a deploy, the plan deletes the files its old
// root's manifest lists, and the deploy removes that manifest too.
func TestDisabledOutputIsCleanedUp(t *testing.T) {
	env, e, req, repo := deployedCodexRepo(t)
	skill := filepath.Join(env.Cwd, ".agents", "skills", "s", "SKILL.md")
	if _, err := os.Stat(skill); err != nil {
		t.Fatal(err)
	}
	y := filepath.Join(repo, "agentpack.yaml")
	mustWrite(t, y, strings.Replace(mustRead(t, y), "codex: {scope: project}", "codex: {scope: project, options: {write_repo_skills: false}}", 1))

	_, p, err := e.Plan(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	deletes := 0
	for _, c := range p.Changes {
		if c.Op == plan.OpDelete {
			deletes++
		}
	}
	_, st, err := e.Status(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if deletes != 2 {
		t.Fatalf("skill output turned off: want the 2 managed skill files deleted, plan has %d deletes (%+v); status drift %+v",
			deletes, p.Changes, st.Drift)
	}
	// Deploying removes the files, the old root's manifest, and its empty folders.
	if _, _, err := e.Deploy(context.Background(), req, true, engine.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, gone := range []string{skill, filepath.Join(env.Cwd, ".agents", "skills", ".agentpack.manifest.codex.json")} {
		if _, err := os.Stat(gone); !os.IsNotExist(err) {
			t.Fatalf("%s should be gone: %v", gone, err)
		}
	}
	if _, p, _ = e.Plan(context.Background(), req); len(p.Changes) != 0 {
		t.Fatalf("want a clean plan afterwards, got %+v", p.Changes)
	}
	// Turning the output back on redeploys the skill.
	mustWrite(t, y, strings.Replace(mustRead(t, y), ", options: {write_repo_skills: false}", "", 1))
	if _, p, _ = e.Plan(context.Background(), req); p.Summary.Create != 2 {
		t.Fatalf("want the skill created again, got %+v", p.Changes)
	}
}

// TestStaleRootsStayInTheirProject: a project root left behind in another
// project is not this project's business.
func TestStaleRootsStayInTheirProject(t *testing.T) {
	env := testEnv(t)
	repo := codexRepo(t)
	req := engine.Request{Repo: repo}
	if _, _, err := engine.New(env, targets.NewSet()).Deploy(context.Background(), req, true, engine.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	other := env
	other.Cwd = filepath.Join(t.TempDir(), "other")
	mustWrite(t, filepath.Join(other.Cwd, ".git", "HEAD"), "ref: refs/heads/main\n")
	_, p, err := engine.New(other, targets.NewSet()).Plan(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range p.Changes {
		if c.Op == plan.OpDelete {
			t.Fatalf("a plan in another project deletes %s", c.Path)
		}
	}
}

// TestRemovedTargetIsCleanedUp: deleting a target from agentpack.yaml
// removes what agentpack wrote for it, like removing a module does; a
// --target filter never does.
func TestRemovedTargetIsCleanedUp(t *testing.T) {
	env := testEnv(t)
	repo := writeRepo(t, map[string]string{
		"agentpack.yaml": `version: 1
profiles: {default: {include_tags: [base]}}
targets:
  codex: {scope: project}
  claude_code: {scope: project}
modules:
  - {id: instructions:base, type: instructions, tags: [base], source: {local_path: {path: modules/base}}}
`,
		"modules/base/AGENTS.md": "# base\n",
	})
	e := engine.New(env, targets.NewSet())
	req := engine.Request{Repo: repo}
	if _, _, err := e.Deploy(context.Background(), req, true, engine.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	y := filepath.Join(repo, "agentpack.yaml")
	mustWrite(t, y, strings.Replace(mustRead(t, y), "  claude_code: {scope: project}\n", "", 1))
	// Narrowing with --target leaves claude_code alone.
	if _, p, err := e.Plan(context.Background(), engine.Request{Repo: repo, Target: "codex"}); err != nil || len(p.Changes) != 0 {
		t.Fatalf("--target codex must not touch claude_code: %v %+v", err, p)
	}
	_, p, err := e.Plan(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Changes) != 1 || p.Changes[0].Op != plan.OpDelete || !strings.HasSuffix(p.Changes[0].Path.String(), "CLAUDE.md") {
		t.Fatalf("want CLAUDE.md deleted, got %+v", p.Changes)
	}
}

// TestRollbackReRegistersRoots: a rollback that brings a root's manifest
// back makes its files managed again.
func TestRollbackReRegistersRoots(t *testing.T) {
	_, e, req, repo := deployedCodexRepo(t)
	y := filepath.Join(repo, "agentpack.yaml")
	mustWrite(t, y, strings.Replace(mustRead(t, y), "codex: {scope: project}", "codex: {scope: project, options: {write_repo_skills: false}}", 1))
	if _, _, err := e.Deploy(context.Background(), req, true, engine.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.Rollback(context.Background(), engine.RollbackOptions{Last: true}); err != nil {
		t.Fatal(err)
	}
	_, p, err := e.Plan(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if p.Summary.Delete != 2 {
		t.Fatalf("after the rollback the restored skill files must be deletable again, got %+v", p.Changes)
	}
}

// TestStaleManifestOfGoneFilesIsRemovedThroughKeptAnswers: an output
// turned off after its files were deleted by hand leaves a plan with no
// changes but a manifest to remove. With the CLI's kept answers on, that
// plan is not kept as one with nothing to do: the deploy after it removes
// the manifest instead of answering "no changes".
func TestStaleManifestOfGoneFilesIsRemovedThroughKeptAnswers(t *testing.T) {
	ctx := context.Background()
	env, _, req, repo := deployedCodexRepo(t)
	skills := filepath.Join(env.Cwd, ".agents", "skills")
	manifest := filepath.Join(skills, ".agentpack.manifest.codex.json")
	if err := os.RemoveAll(filepath.Join(skills, "s")); err != nil {
		t.Fatal(err)
	}
	y := filepath.Join(repo, "agentpack.yaml")
	mustWrite(t, y, strings.Replace(mustRead(t, y), "codex: {scope: project}", "codex: {scope: project, options: {write_repo_skills: false}}", 1))
	cli := func() *engine.Engine {
		e := engine.New(env, targets.NewSet())
		e.SourceCache = &engine.SourceCache{Build: "test"}
		return e
	}
	for try := 0; try < 3; try++ {
		time.Sleep(150 * time.Millisecond) // past the racy window of the edits
		_, p, err := cli().PlanView(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Changes) != 0 {
			t.Fatalf("the plan of an output whose files are gone has changes: %+v", p.Changes)
		}
	}
	_, d, err := cli().Deploy(ctx, req, true, engine.ApplyOptions{})
	if err != nil || !d.Applied {
		t.Fatalf("the deploy that should remove the stale manifest: %v %+v", err, d)
	}
	if _, err := os.Stat(manifest); !os.IsNotExist(err) {
		t.Fatalf("the manifest of the output turned off is still there: %v", err)
	}
}
