package engine_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/agentpack/agentpack/targets"
)

// keptStatus runs status with the CLI's caches (source cache and kept
// answers) and says whether it was answered from the kept answer: such a
// status reads no source cache file. An error is returned as its text.
func (w *cacheWorld) keptStatus() (out string, kept bool) {
	w.t.Helper()
	var loads atomic.Int64
	e := engine.New(w.env, targets.NewSet())
	e.Sys = sourceReads{e.Sys, fsys.AbsPath(filepath.Join(w.env.CacheDir(), "load")), &loads}
	e.SourceCache = &engine.SourceCache{Build: "test"}
	_, s, err := e.Status(context.Background(), w.req, nil)
	if err != nil {
		return "error: " + err.Error(), loads.Load() == 0
	}
	j, _ := json.Marshal(s)
	return string(j), loads.Load() == 0
}

// warmStatus runs status until its answer is kept (the first runs after a
// write compute it: what they read is too recent to trust) and says
// whether it got there.
func (w *cacheWorld) warmStatus() bool {
	for try := 0; try < 3; try++ {
		time.Sleep(150 * time.Millisecond) // past the racy window of the last write
		if _, kept := w.keptStatus(); kept {
			return true
		}
	}
	return false
}

// freshStatus is status with no cache at all (or its error).
func (w *cacheWorld) freshStatus() string {
	w.t.Helper()
	_, s, err := w.engine(false).Status(context.Background(), w.req, nil)
	if err != nil {
		return "error: " + err.Error()
	}
	j, _ := json.Marshal(s)
	return string(j)
}

// Every way a deployed file, a managed folder or agentpack's own records
// can change that an answer kept by stat data could miss: after each, a
// status with the kept answer equals one with no cache, and before each
// the kept answer was really used.
func TestKeptStatusSeesEveryTargetEdit(t *testing.T) {
	// Each edit gets a world of its own, deployed afresh.
	var w *cacheWorld
	var skills, skill, ref string
	fresh := func() {
		w = newCacheWorld(t)
		w.deploy(w.engine(true))
		skills = filepath.Join(filepath.Dir(w.env.Cwd), ".agents", "skills")
		skill = filepath.Join(skills, "s0001", "SKILL.md")
		ref = filepath.Join(skills, "s0002", "ref", "f01.md")
	}
	edits := []struct {
		name  string
		edit  func()
		drift string // a kind the fresh status must report
	}{
		{"deployed file edited, same size, modification time put back", func() {
			fi, _ := os.Stat(skill)
			must(t, os.WriteFile(skill, sameSize(t, skill), 0o644))
			putBack(t, skill, fi)
		}, "modified"},
		{"deployed file deleted", func() { must(t, os.Remove(ref)) }, "missing"},
		{"unmanaged file added to a managed folder", func() {
			mustWrite(t, filepath.Join(skills, "s0003", "ref", "notes.md"), "mine\n")
		}, "extra"},
		{"unmanaged file added to a managed root", func() {
			mustWrite(t, filepath.Join(skills, "s0004", "extra.md"), "mine\n")
		}, "extra"},
		{"deployed file replaced by a symlink to a copy", func() {
			data, _ := os.ReadFile(skill)
			copyPath := filepath.Join(t.TempDir(), "copy.md")
			mustWrite(t, copyPath, string(data))
			must(t, os.Remove(skill))
			must(t, os.Symlink(copyPath, skill))
		}, "error"},
		{"target manifest deleted", func() {
			ents, _ := filepath.Glob(filepath.Join(skills, ".agentpack*"))
			if len(ents) == 0 {
				t.Fatal("no target manifest found under " + skills)
			}
			for _, m := range ents {
				must(t, os.RemoveAll(m))
			}
		}, ""},
	}
	for _, ed := range edits {
		fresh()
		kept := w.warmStatus()
		// A source touched: the next answer is computed again, this time
		// with the folder listings and file hashes from the stat cache,
		// and kept with what that computation looked at.
		must(t, os.Chmod(filepath.Join(w.repo, "agentpack.yaml"), 0o644))
		kept = kept && w.warmStatus()
		if !kept {
			t.Fatalf("%s: the status before the edit was not answered from the kept answer", ed.name)
		}
		ed.edit()
		var got string
		got, kept = w.keptStatus()
		want := w.freshStatus()
		if got != want {
			t.Errorf("%s: status with the kept answer\n%s\nwithout any cache\n%s", ed.name, got, want)
		}
		if kept {
			t.Errorf("%s: the kept answer was used after the edit", ed.name)
		}
		if ed.drift == "error" && !strings.HasPrefix(want, "error: ") {
			t.Errorf("%s: status did not refuse: %s", ed.name, want)
		} else if ed.drift != "" && ed.drift != "error" && !strings.Contains(want, `"kind":"`+ed.drift+`"`) {
			t.Errorf("%s: no %s drift in %s", ed.name, ed.drift, want)
		}
	}
}

// cliEngine is an engine as the CLI builds it (source cache, kept
// answers), counting reads of the source cache: a command answered from a
// kept answer reads none.
func (w *cacheWorld) cliEngine(loads *atomic.Int64) *engine.Engine {
	e := engine.New(w.env, targets.NewSet())
	e.Sys = sourceReads{e.Sys, fsys.AbsPath(filepath.Join(w.env.CacheDir(), "load")), loads}
	e.SourceCache = &engine.SourceCache{Build: "test"}
	return e
}

// planAndDiff is the plan (as the plan command asks for it when view)
// and diff of e, as JSON.
func (w *cacheWorld) planAndDiff(e *engine.Engine, view bool) (planJSON, diffJSON string) {
	w.t.Helper()
	planOf := e.Plan
	if view {
		planOf = e.PlanView
	}
	_, p, err := planOf(context.Background(), w.req)
	if err != nil {
		w.t.Fatal(err)
	}
	_, d, err := e.Diff(context.Background(), w.req)
	if err != nil {
		w.t.Fatal(err)
	}
	pj, _ := json.Marshal(p)
	dj, _ := json.Marshal(d)
	return string(pj), string(dj)
}

// An empty plan and diff and a deploy with nothing to do are answered from
// kept answers; after a source or a deployed file changes they are
// computed again and equal a run with no cache.
func TestKeptPlanDiffAndNoOpDeploy(t *testing.T) {
	ctx := context.Background()
	w := newCacheWorld(t)
	w.deploy(w.engine(true))
	var loads atomic.Int64
	views := func() (string, string) { return w.planAndDiff(w.cliEngine(&loads), true) }
	fresh := func() (string, string) { return w.planAndDiff(w.engine(false), false) }
	// Warm: the first runs after the deploy compute and keep.
	for try := 0; try < 3; try++ {
		time.Sleep(150 * time.Millisecond)
		loads.Store(0)
		views()
		if _, d, err := w.cliEngine(&loads).Deploy(ctx, w.req, true, engine.ApplyOptions{}); err != nil || d.Applied || d.Reason != "no_changes" {
			t.Fatalf("no-op deploy: %v %+v", err, d)
		}
		if loads.Load() == 0 {
			break
		}
	}
	if loads.Load() != 0 {
		t.Fatal("plan, diff and a no-op deploy of an unchanged tree were not answered from kept answers")
	}
	p, d := views()
	fp, fd := fresh()
	if p != fp || d != fd {
		t.Fatalf("kept answers differ from fresh ones:\nplan %s\nfresh %s\ndiff %s\nfresh %s", p, fp, d, fd)
	}

	// A source edited: the plan shows it, the deploy applies it.
	mustWrite(t, filepath.Join(w.repo, "modules", "s0001", "SKILL.md"), "---\nname: s0001\ndescription: edited\n---\n")
	p, d = views()
	fp, fd = fresh()
	if p != fp || d != fd || !strings.Contains(p, `"update":2`) {
		t.Fatalf("after a source edit:\nplan %s\nfresh %s\ndiff %s\nfresh %s", p, fp, d, fd)
	}
	if _, dd, err := w.cliEngine(&loads).Deploy(ctx, w.req, true, engine.ApplyOptions{}); err != nil || !dd.Applied {
		t.Fatalf("deploy after a source edit: %v %+v", err, dd)
	}

	// A deployed file edited by hand after a no-op deploy was kept: the
	// next deploy refuses to overwrite it instead of saying nothing to do.
	for try := 0; try < 3; try++ {
		time.Sleep(150 * time.Millisecond)
		loads.Store(0)
		if _, _, err := w.cliEngine(&loads).Deploy(ctx, w.req, true, engine.ApplyOptions{}); err != nil {
			t.Fatal(err)
		}
		if loads.Load() == 0 {
			break
		}
	}
	deployed := filepath.Join(filepath.Dir(w.env.Cwd), ".agents", "skills", "s0002", "SKILL.md")
	mustWrite(t, deployed, "edited by hand\n")
	if _, dd, err := w.cliEngine(&loads).Deploy(ctx, w.req, true, engine.ApplyOptions{}); err == nil {
		t.Fatalf("a deploy over a hand-edited file did not refuse: %+v", dd)
	}
}

// A deploy preview, and a deploy whose in-sync plan was confirmed by its
// hash (the CLI's prompt, whose shown plan is the kept one), answer from
// the plan kept by `plan` while nothing it read changed, as equal to a
// run with no cache; a confirmed hash that is not the current plan's is
// still refused, and once a source changes the preview shows the change
// and the empty plan's hash no longer applies anything.
func TestDeployPreviewAndConfirmedNoOpUseTheKeptPlan(t *testing.T) {
	ctx := context.Background()
	w := newCacheWorld(t)
	w.deploy(w.engine(true))
	var loads atomic.Int64
	var empty string
	for try := 0; try < 3; try++ {
		time.Sleep(150 * time.Millisecond) // past the racy window of the deploy
		loads.Store(0)
		_, p, err := w.cliEngine(&loads).PlanView(ctx, w.req)
		if err != nil {
			t.Fatal(err)
		}
		empty = p.Hash()
		if loads.Load() == 0 {
			break
		}
	}
	if loads.Load() != 0 {
		t.Fatal("the in-sync plan was never answered from its kept answer")
	}
	preview := func(e *engine.Engine) string {
		t.Helper()
		_, d, err := e.Deploy(ctx, w.req, false, engine.ApplyOptions{})
		if err != nil {
			t.Fatal(err)
		}
		j, _ := json.Marshal(d)
		return string(j)
	}
	loads.Store(0)
	if got, want := preview(w.cliEngine(&loads)), preview(w.engine(false)); got != want || loads.Load() != 0 {
		t.Errorf("deploy preview (read the source cache %d times) = %s, want %s from the kept plan", loads.Load(), got, want)
	}
	_, d, err := w.cliEngine(&loads).Deploy(ctx, w.req, true, engine.ApplyOptions{ExpectPlanHash: empty})
	if err != nil || d.Applied || d.Reason != "no_changes" || loads.Load() != 0 {
		t.Errorf("confirmed no-op deploy = %+v, %v (source cache read %d times); want no_changes from the kept plan", d, err, loads.Load())
	}
	if _, _, err := w.cliEngine(&loads).Deploy(ctx, w.req, true, engine.ApplyOptions{ExpectPlanHash: "not-" + empty}); apperr.CodeOf(err) != apperr.ConfirmTokenMismatch {
		t.Errorf("a deploy confirming another plan = %v, want E_CONFIRM_TOKEN_MISMATCH", err)
	}

	mustWrite(t, filepath.Join(w.repo, "modules", "s0001", "SKILL.md"), "---\nname: s0001\ndescription: edited\n---\n")
	if got, want := preview(w.cliEngine(&loads)), preview(w.engine(false)); got != want || !strings.Contains(got, `"update":2`) {
		t.Errorf("deploy preview after a source edit = %s, want %s", got, want)
	}
	if _, d, err := w.cliEngine(&loads).Deploy(ctx, w.req, true, engine.ApplyOptions{ExpectPlanHash: empty}); apperr.CodeOf(err) != apperr.ConfirmTokenMismatch {
		t.Errorf("the empty plan's hash after a source edit = %+v, %v; want E_CONFIRM_TOKEN_MISMATCH", d, err)
	}
}

// A status that finds the plan in sync keeps the plan's and the empty
// diff's answers with its own: the first plan, diff, deploy preview and
// deploy after it compute nothing and equal a run with no cache. After a
// source edit the status's plan is not in sync, and they show the change.
func TestStatusKeepsTheInSyncPlanAndDiff(t *testing.T) {
	ctx := context.Background()
	w := newCacheWorld(t)
	w.deploy(w.engine(true))
	if !w.warmStatus() {
		t.Fatal("status was never answered from its kept answer")
	}
	shown := func(e *engine.Engine, view bool) string {
		t.Helper()
		p, d := w.planAndDiff(e, view)
		_, dd, err := e.Deploy(ctx, w.req, false, engine.ApplyOptions{})
		if err != nil {
			t.Fatal(err)
		}
		j, _ := json.Marshal(dd)
		return p + d + string(j)
	}
	var loads atomic.Int64
	if got, want := shown(w.cliEngine(&loads), true), shown(w.engine(false), false); got != want || loads.Load() != 0 {
		t.Errorf("after a kept status: plan, diff, deploy preview (source cache read %d times) = %s, want %s answered from kept answers", loads.Load(), got, want)
	}
	if _, d, err := w.cliEngine(&loads).Deploy(ctx, w.req, true, engine.ApplyOptions{}); err != nil || d.Applied || d.Reason != "no_changes" || loads.Load() != 0 {
		t.Errorf("no-op deploy after a kept status = %+v, %v (source cache read %d times)", d, err, loads.Load())
	}

	mustWrite(t, filepath.Join(w.repo, "modules", "s0001", "SKILL.md"), "---\nname: s0001\ndescription: edited\n---\n")
	w.keptStatus() // computes; its plan has changes, so it keeps no plan
	got, want := shown(w.cliEngine(&loads), true), shown(w.engine(false), false)
	if got != want || !strings.Contains(got, `"update":2`) {
		t.Errorf("after a source edit: %s, want %s", got, want)
	}
}

// deployedStatCacheReads deploys w's repo, then counts what a plan after
// the deploy, its caches merged, reads of the stat cache; counted makes
// engines that count the same.
func (w *cacheWorld) deployedStatCacheReads(ctx context.Context) (onePlan int64, counted func(*atomic.Int64) *engine.Engine) {
	w.t.Helper()
	w.deploy(w.engine(true))
	time.Sleep(150 * time.Millisecond) // past the racy window of the deploy
	statCache := fsys.AbsPath(filepath.Join(w.env.AgentpackHome, "state", "statcache"))
	counted = func(n *atomic.Int64) *engine.Engine {
		e := w.engine(true)
		e.Sys = sourceReads{e.Sys, statCache, n}
		return e
	}
	// The first plan after the deploy reads more (it merges what the
	// deploy recorded); the one after it is what a plan reads.
	if _, _, err := w.engine(true).Plan(ctx, w.req); err != nil {
		w.t.Fatal(err)
	}
	var n atomic.Int64
	if _, p, err := counted(&n).Plan(ctx, w.req); err != nil || len(p.Changes) != 0 || n.Load() == 0 {
		w.t.Fatalf("plan: %v, %d changes, %d stat cache reads", err, len(p.Changes), n.Load())
	}
	return n.Load(), counted
}

// The first deploy with nothing to do after a deploy that wrote, the repo
// unchanged since, plans once (through a tracker, and keeps the plan): it
// loads the stat cache once, as one plan does, where it planned twice
// before; and the deploy after it answers from the kept plan.
func TestNoOpDeployAfterADeployPlansOnce(t *testing.T) {
	ctx := context.Background()
	w := newCacheWorld(t)
	onePlan, counted := w.deployedStatCacheReads(ctx)
	var deployReads atomic.Int64
	_, d, err := counted(&deployReads).Deploy(ctx, w.req, true, engine.ApplyOptions{})
	if err != nil || d.Applied || d.Reason != "no_changes" {
		t.Fatalf("no-op deploy: %+v, %v", d, err)
	}
	if deployReads.Load() != onePlan {
		t.Errorf("the no-op deploy read the stat cache %d times, one plan %d: it planned more than once", deployReads.Load(), onePlan)
	}
	var loads atomic.Int64
	if _, d, err := w.cliEngine(&loads).Deploy(ctx, w.req, true, engine.ApplyOptions{}); err != nil || d.Reason != "no_changes" || loads.Load() != 0 {
		t.Errorf("the deploy after it = %+v, %v (source cache read %d times); want no_changes from the kept plan", d, err, loads.Load())
	}
}

// Likewise the first plan and diff after a deploy, the repo unchanged
// since: each is computed once, through a tracker, and kept, where they
// were computed untracked and then again tracked.
func TestPlanAndDiffAfterADeployComputeOnce(t *testing.T) {
	ctx := context.Background()
	w := newCacheWorld(t)
	onePlan, counted := w.deployedStatCacheReads(ctx)
	var planReads, diffReads atomic.Int64
	if _, p, err := counted(&planReads).PlanView(ctx, w.req); err != nil || len(p.Changes) != 0 || planReads.Load() != onePlan {
		t.Errorf("the plan command read the stat cache %d times, one plan %d (%v)", planReads.Load(), onePlan, err)
	}
	if _, d, err := counted(&diffReads).Diff(ctx, w.req); err != nil || len(d.Changes) != 0 || diffReads.Load() != onePlan {
		t.Errorf("the diff read the stat cache %d times, one plan %d (%v)", diffReads.Load(), onePlan, err)
	}
	var loads atomic.Int64
	p, d := w.planAndDiff(w.cliEngine(&loads), true)
	if fp, fd := w.planAndDiff(w.engine(false), false); p != fp || d != fd || loads.Load() != 0 {
		t.Errorf("kept plan and diff (source cache read %d times):\n%s\n%s\nwant\n%s\n%s", loads.Load(), p, d, fp, fd)
	}
}

// A deployed file edited by hand, then the repo changed to match it (what
// `evolve propose` leads to): the plan has nothing to change, but the
// target manifest still records the old bytes, so a deploy must record the
// new ones rather than answer "no changes" from the in-sync plan kept by
// `plan`. Otherwise, once the repo moves on, the next deploy takes the
// file for one edited since the last deploy and refuses it.
func TestNoOpDeployRecordsWhatTheRepoNowWants(t *testing.T) {
	ctx := context.Background()
	w := newCacheWorld(t)
	w.deploy(w.engine(true))
	source := filepath.Join(w.repo, "modules", "s0002", "SKILL.md")
	original, err := os.ReadFile(source)
	if err != nil {
		t.Fatal(err)
	}
	deployed := filepath.Join(filepath.Dir(w.env.Cwd), ".agents", "skills", "s0002", "SKILL.md")
	alsoDeployed := filepath.Join(w.env.Home, ".claude", "skills", "s0002", "SKILL.md")
	edited := "---\nname: s0002\ndescription: edited by hand\n---\n"
	mustWrite(t, deployed, edited)
	mustWrite(t, alsoDeployed, edited)
	mustWrite(t, source, edited)
	var loads atomic.Int64
	for try := 0; try < 3; try++ {
		time.Sleep(150 * time.Millisecond) // past the racy window of the edits
		loads.Store(0)
		_, p, err := w.cliEngine(&loads).PlanView(ctx, w.req)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Changes) != 0 {
			t.Fatalf("the plan of a repo that matches the hand edit has changes: %+v", p.Changes)
		}
		if loads.Load() == 0 {
			t.Fatal("an in-sync plan whose manifest is out of date was kept")
		}
	}
	if _, d, err := w.cliEngine(&loads).Deploy(ctx, w.req, true, engine.ApplyOptions{}); err != nil || !d.Applied {
		t.Fatalf("deploy that should record the hand edit in the manifest: %v %+v", err, d)
	}
	mustWrite(t, source, string(original))
	if _, d, err := w.cliEngine(&loads).Deploy(ctx, w.req, true, engine.ApplyOptions{}); err != nil || !d.Applied {
		t.Fatalf("deploy after the repo moved on from the recorded edit: %v %+v", err, d)
	}
	if got, _ := os.ReadFile(deployed); string(got) != string(original) {
		t.Fatalf("deployed file %q, want the repo's %q", got, original)
	}
}

// A status with drift is kept too, and answered from the kept answer it
// says what a status computed afresh says, hashes and all (each
// "sha256:" digest decoded and encoded again).
func TestKeptStatusWithDriftAnswersTheSame(t *testing.T) {
	w := newCacheWorld(t)
	w.deploy(w.engine(true))
	skill := filepath.Join(filepath.Dir(w.env.Cwd), ".agents", "skills", "s0001", "SKILL.md")
	mustWrite(t, skill, "edited by hand\n")
	if !w.warmStatus() {
		t.Fatal("the status with drift was not answered from a kept answer")
	}
	got, _ := w.keptStatus()
	want := w.freshStatus()
	if got != want || !strings.Contains(want, `"kind":"modified"`) || !strings.Contains(want, `"actual":"sha256:`) {
		t.Fatalf("kept status\n%s\nfresh status\n%s", got, want)
	}
}

// A status too large to keep leaves a mark instead of an answer: the
// statuses after it are computed without tracking every path for a
// fingerprint no answer would use, and answer the same as one with no
// cache; once the drift is small again the mark goes, and the status
// after that is kept.
func TestStatusTooLargeToKeepIsMarkedUntilSmallAgain(t *testing.T) {
	w := &cacheWorld{t: t, env: testEnv(t), repo: benchRepo(t, 300, 10)}
	w.req = engine.Request{Repo: w.repo}
	w.deploy(w.engine(true))
	deployed := filepath.Join(w.env.Cwd, ".agents")
	if err := os.RemoveAll(deployed); err != nil {
		t.Fatal(err)
	}
	marked := func() bool {
		t.Helper()
		files, _ := filepath.Glob(filepath.Join(w.env.CacheDir(), "answers", "*"))
		for _, f := range files {
			if data, err := os.ReadFile(f); err == nil && strings.HasPrefix(string(data), "agentpack: the last answer was too large") {
				return true
			}
		}
		return false
	}
	want := w.freshStatus()
	if !strings.Contains(want, `"pending":3000`) {
		t.Fatalf("fresh status after removing the deployed files: %s", want[len(want)-600:])
	}
	for i := range 3 {
		time.Sleep(150 * time.Millisecond) // past the racy window of the removal
		got, kept := w.keptStatus()
		if got != want || kept {
			t.Fatalf("status %d of 3,000 pending files (kept %v) differs from one with no cache", i, kept)
		}
		if !marked() {
			t.Fatalf("status %d of 3,000 pending files left no mark that its answer was too large to keep", i)
		}
	}
	w.deploy(w.engine(true))
	if !w.warmStatus() {
		t.Fatal("the status in sync again was never kept")
	}
	if marked() {
		t.Error("the mark of a too large answer stayed once the status was kept again")
	}
	if got, want := func() string { s, _ := w.keptStatus(); return s }(), w.freshStatus(); got != want {
		t.Fatalf("kept status in sync\n%s\nfresh\n%s", got, want)
	}
}
