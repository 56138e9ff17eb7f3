package engine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/agentpack/agentpack/targets"
)

func wantCode(t *testing.T, err error, code apperr.Code, mention string) {
	t.Helper()
	if apperr.CodeOf(err) != code || !strings.Contains(err.Error(), mention) {
		t.Fatalf("got %v, want %s mentioning %s", err, code, mention)
	}
}

func hasWarning(ws []string, part string) bool {
	return slices.ContainsFunc(ws, func(w string) bool { return strings.Contains(w, part) })
}

// A skill folder moved into dotfiles and linked back is never written,
// deleted or replaced through the link: deploy, module removal and
// rollback all refuse with E_IO_INVALID_PATH naming it.
func TestLinkedSkillFolderIsNeverWrittenThrough(t *testing.T) {
	env, e, req, repo := deployedCodexRepo(t)
	skill := filepath.Join(env.Cwd, ".agents/skills/s")
	dotfiles := filepath.Join(t.TempDir(), "dotfiles", "s")
	if err := os.MkdirAll(filepath.Dir(dotfiles), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(skill, dotfiles); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dotfiles, skill); err != nil {
		t.Fatal(err)
	}
	untouched := func(step string) {
		t.Helper()
		if got := mustRead(t, filepath.Join(dotfiles, "extra.txt")); got != "x\n" {
			t.Fatalf("%s: dotfiles/s/extra.txt = %q", step, got)
		}
		if fi, err := os.Lstat(skill); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Fatalf("%s: the link was replaced: %v", step, err)
		}
	}

	// A changed module is not written through the link.
	mustWrite(t, filepath.Join(repo, "modules/s/extra.txt"), "x2\n")
	_, _, err := e.Deploy(context.Background(), req, true, engine.ApplyOptions{Force: true, Adopt: true})
	wantCode(t, err, apperr.IOInvalidPath, skill)
	untouched("update")

	// A removed module's files are not deleted through it.
	yaml := mustRead(t, filepath.Join(repo, "agentpack.yaml"))
	mustWrite(t, filepath.Join(repo, "agentpack.yaml"), yaml[:strings.Index(yaml, "  - id: skill:s")])
	_, _, err = e.Deploy(context.Background(), req, true, engine.ApplyOptions{Force: true})
	wantCode(t, err, apperr.IOInvalidPath, skill)
	untouched("remove")

	// Rollback neither deletes through it nor replaces it with a folder.
	_, _, err = e.Rollback(context.Background(), engine.RollbackOptions{Last: true})
	wantCode(t, err, apperr.IOInvalidPath, skill)
	untouched("rollback")
	if _, err := os.Stat(filepath.Join(env.Cwd, "AGENTS.md")); err != nil {
		t.Fatalf("a refused rollback changed other files: %v", err)
	}
}

// Rolling back a path that is now a file symlink leaves the link and what
// it points to alone.
func TestRollbackKeepsAFileLink(t *testing.T) {
	env, e, req, repo := deployedCodexRepo(t)
	mustWrite(t, filepath.Join(repo, "modules/s/extra.txt"), "x2\n")
	if _, _, err := e.Deploy(context.Background(), req, true, engine.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	extra := filepath.Join(env.Cwd, ".agents/skills/s/extra.txt")
	mine := filepath.Join(t.TempDir(), "mine.txt")
	mustWrite(t, mine, "mine\n")
	if err := os.Remove(extra); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(mine, extra); err != nil {
		t.Fatal(err)
	}
	_, _, err := e.Rollback(context.Background(), engine.RollbackOptions{Last: true})
	wantCode(t, err, apperr.IOInvalidPath, extra)
	if fi, err := os.Lstat(extra); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced by a file: %v", err)
	}
	if got := mustRead(t, mine); got != "mine\n" {
		t.Fatalf("the link's target was written: %q", got)
	}
}

// crashMidDeploy deploys the codex repo, changes extra.txt in the module and
// runs a deploy in a child that dies at phase (or after write n).
func crashMidDeploy(t *testing.T, phase string, n int) (engine.Env, string) {
	t.Helper()
	env, _, _, repo := deployedCodexRepo(t)
	mustWrite(t, filepath.Join(repo, "modules/s/extra.txt"), "x2\n")
	mustWrite(t, filepath.Join(repo, "modules/base/AGENTS.md"), "# base v2\n")
	code := runCrashChild(t, crashJob{Env: env, Repo: repo, Op: "deploy", CrashPhase: phase, CrashWrite: n})
	if code != 137 {
		t.Fatalf("the child did not crash (exit %d)", code)
	}
	if _, err := os.Stat(filepath.Join(env.AgentpackHome, "state/journal.json")); err != nil {
		t.Fatalf("no journal after the crash: %v", err)
	}
	return env, repo
}

// An edit made between a crash and the next command is kept, and the bytes
// the interrupted apply replaced are recorded so rollback brings them back.
func TestRecoveryKeepsAnEditMadeAfterTheCrash(t *testing.T) {
	env, _ := crashMidDeploy(t, "files written", 0)
	extra := filepath.Join(env.Cwd, ".agents/skills/s/extra.txt")
	agents := filepath.Join(env.Cwd, "AGENTS.md")
	if got := mustRead(t, extra); got != "x2\n" {
		t.Fatalf("the crashed apply did not write extra.txt: %q", got)
	}
	mustWrite(t, extra, "edited after the crash\n")

	e := engine.New(env, targets.NewSet())
	_, warnings, err := e.Snapshots(context.Background()) // any command recovers first
	if err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, extra); got != "edited after the crash\n" {
		t.Fatalf("recovery overwrote the edit: %q", got)
	}
	if got := mustRead(t, agents); got != "# base\n" {
		t.Fatalf("recovery did not put AGENTS.md back: %q", got)
	}
	if !hasWarning(warnings, "kept "+extra) || !hasWarning(warnings, "rollback --last") {
		t.Fatalf("no warning naming the kept file and how to get its bytes back: %q", warnings)
	}
	// The pre-apply bytes come back with rollback --last, and the edit is
	// saved by that rollback in turn.
	if _, _, err := e.Rollback(context.Background(), engine.RollbackOptions{Last: true}); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, extra); got != "x\n" {
		t.Fatalf("rollback --last after recovery: %q, want the pre-apply bytes", got)
	}
	if _, _, err := e.Rollback(context.Background(), engine.RollbackOptions{Last: true}); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, extra); got != "edited after the crash\n" {
		t.Fatalf("the edit is lost: %q", got)
	}
}

// A truncated, empty or garbage journal after a crash is rebuilt from the
// fsynced copy beside the snapshot's saved bytes, and the partial apply is
// rolled back.
func TestDamagedJournalIsRecoveredFromItsCopy(t *testing.T) {
	for name, body := range map[string]string{"empty": "", "truncated": `{"id": "2026`, "garbage": "\x00\x01\xfe"} {
		t.Run(name, func(t *testing.T) {
			env, _ := crashMidDeploy(t, "", 2)
			mustWrite(t, filepath.Join(env.AgentpackHome, "state/journal.json"), body)
			_, warnings, err := engine.New(env, targets.NewSet()).Snapshots(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if !hasWarning(warnings, "recovered from its copy") {
				t.Fatalf("no warning about the damaged journal: %q", warnings)
			}
			if got := mustRead(t, filepath.Join(env.Cwd, ".agents/skills/s/extra.txt")); got != "x\n" {
				t.Fatalf("extra.txt = %q, want the pre-apply bytes", got)
			}
			if got := mustRead(t, filepath.Join(env.Cwd, "AGENTS.md")); got != "# base\n" {
				t.Fatalf("AGENTS.md = %q, want the pre-apply bytes", got)
			}
			if _, err := os.Stat(filepath.Join(env.AgentpackHome, "state/journal.json")); !os.IsNotExist(err) {
				t.Fatalf("journal still there: %v", err)
			}
		})
	}
}

// A damaged journal with no copy stops every command with E_IO_FAILED
// pointing at doctor --fix, which moves it aside (kept) so work can go on.
func TestDamagedJournalWithoutCopyNeedsDoctorFix(t *testing.T) {
	env, repo := crashMidDeploy(t, "", 2)
	state := filepath.Join(env.AgentpackHome, "state")
	mustWrite(t, filepath.Join(state, "journal.json"), "garbage")
	copies, _ := filepath.Glob(filepath.Join(state, "snapshots/*/journal.json"))
	for _, c := range copies {
		if err := os.Remove(c); err != nil {
			t.Fatal(err)
		}
	}
	e := engine.New(env, targets.NewSet())
	_, _, err := e.Deploy(context.Background(), engine.Request{Repo: repo}, true, engine.ApplyOptions{})
	wantCode(t, err, apperr.IOFailed, "journal")
	if hint := apperr.As(err).Hint; !strings.Contains(hint, "agentpack doctor --fix") {
		t.Fatalf("hint %q does not name doctor --fix", hint)
	}
	d, _, err := e.Doctor(context.Background(), engine.Request{Repo: repo}, true)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(d.Fixed, func(s string) bool { return strings.Contains(s, "journal.json.damaged-") }) {
		t.Fatalf("doctor --fix did not say where the journal went: %q", d.Fixed)
	}
	aside, _ := filepath.Glob(filepath.Join(state, "journal.json.damaged-*"))
	if len(aside) != 1 || mustRead(t, aside[0]) != "garbage" {
		t.Fatalf("the damaged journal was not kept: %v", aside)
	}
	if _, _, err := e.Deploy(context.Background(), engine.Request{Repo: repo}, true, engine.ApplyOptions{Force: true}); err != nil {
		t.Fatalf("deploy after doctor --fix: %v", err)
	}
}

// Recovery reads and verifies every saved byte before its first write: with
// a damaged pack it changes nothing; doctor --fix then puts back what it can.
func TestRecoveryWithDamagedBytesChangesNothing(t *testing.T) {
	env, _ := crashMidDeploy(t, "files written", 0)
	state := filepath.Join(env.AgentpackHome, "state")
	packs, _ := filepath.Glob(filepath.Join(state, "snapshots/*/blobs.pack"))
	var newest string
	for _, p := range packs {
		if p > newest {
			newest = p
		}
	}
	mustWrite(t, newest, "damaged")
	before := fileTree(t, env)
	e := engine.New(env, targets.NewSet())
	_, _, err := e.Snapshots(context.Background())
	wantCode(t, err, apperr.SnapshotCorrupted, "")
	if after := fileTree(t, env); !sameTree(before, after) {
		t.Fatalf("a failed recovery changed files:\n%s", treeDiff(before, after))
	}
	if _, _, err := e.Doctor(context.Background(), engine.Request{}, true); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(state, "journal.json")); !os.IsNotExist(err) {
		t.Fatalf("doctor --fix left the journal: %v", err)
	}
}

// Recovery clears what crashed state writes leave: temp files and blob
// folders that no record or journal names.
func TestRecoveryCleansStateLeftovers(t *testing.T) {
	env, _ := crashMidDeploy(t, "", 1)
	state := filepath.Join(env.AgentpackHome, "state")
	junk := []string{
		filepath.Join(state, ".journal.json.tmp123"),
		filepath.Join(state, "snapshots", ".20260101T000000.000000000Z.json.tmp9"),
		filepath.Join(state, "snapshots", "20250101T000000.000000000Z", "blobs.pack"),
	}
	for _, j := range junk {
		mustWrite(t, j, "x")
	}
	if _, _, err := engine.New(env, targets.NewSet()).Snapshots(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, j := range junk {
		if _, err := os.Stat(j); !os.IsNotExist(err) {
			t.Errorf("%s left behind: %v", j, err)
		}
	}
}

// failAfter is a System whose writes and removals fail after the first n
// (from any goroutine: an apply writes in parallel).
type failAfter struct {
	fsys.System
	n     atomic.Int64
	state fsys.AbsPath // agentpack's own state is written fine
}

func (f *failAfter) WriteFile(p fsys.AbsPath, d []byte, m os.FileMode) error {
	if f.state.Contains(p) {
		return f.System.WriteFile(p, d, m)
	}
	if f.n.Add(-1) < 0 {
		return apperr.New(apperr.IOFailed, "cannot write %s: disk on fire", p)
	}
	return f.System.WriteFile(p, d, m)
}

func (f *failAfter) Remove(p fsys.AbsPath) error {
	if f.state.Contains(p) {
		return f.System.Remove(p)
	}
	if f.n.Add(-1) < 0 {
		return apperr.New(apperr.IOFailed, "cannot remove %s: disk on fire", p)
	}
	return f.System.Remove(p)
}

// When an apply fails and rolling it back fails too, the error says that
// files are half-applied and a journal is pending; the next command, with a
// working disk, finishes the rollback.
func TestFailedApplyWhoseRollbackFailsSaysSo(t *testing.T) {
	env := testEnv(t)
	repo := codexRepo(t)
	e := engine.New(env, targets.NewSet())
	real := e.Sys
	failing := &failAfter{System: real, state: fsys.AbsPath(env.AgentpackHome)}
	failing.n.Store(1)
	e.Sys = failing
	_, _, err := e.Deploy(context.Background(), engine.Request{Repo: repo}, true, engine.ApplyOptions{})
	for _, part := range []string{"disk on fire", "rolling the partial apply back failed too", "half-applied", "journal.json is pending"} {
		if err == nil || !strings.Contains(apperr.As(err).Message, part) {
			t.Fatalf("error %v does not say %q", err, part)
		}
	}
	e.Sys = real
	if _, _, err := e.Snapshots(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"AGENTS.md", ".agents"} {
		if _, err := os.Stat(filepath.Join(env.Cwd, p)); !os.IsNotExist(err) {
			t.Fatalf("the next command did not finish the rollback: %s: %v", p, err)
		}
	}
}

// doctor reports leftovers of interrupted state writes; --fix removes them.
func TestDoctorReportsAndCleansStateLeftovers(t *testing.T) {
	env, _, req, _ := deployedCodexRepo(t)
	junk := filepath.Join(env.AgentpackHome, "state", ".journal.json.tmp42")
	mustWrite(t, junk, "x")
	e := engine.New(env, targets.NewSet())
	d, _, err := e.Doctor(context.Background(), req, false)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(d.Checks, func(c engine.DoctorCheck) bool { return c.Name == "state" && c.Status == engine.CheckWarn }) {
		t.Fatalf("doctor did not report the temp file: %+v", d.Checks)
	}
	if _, err := os.Stat(junk); err != nil {
		t.Fatalf("doctor without --fix removed it: %v", err)
	}
	if _, _, err := e.Doctor(context.Background(), req, true); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(junk); !os.IsNotExist(err) {
		t.Fatalf("doctor --fix left %s: %v", junk, err)
	}
}

// failRoots is a System on which the roots registry cannot be written.
type failRoots struct{ fsys.System }

func (f failRoots) WriteFile(p fsys.AbsPath, d []byte, m os.FileMode) error {
	if p.Base() == "roots.json" {
		return apperr.New(apperr.IOPermissionDenied, "cannot write %s: permission denied", p)
	}
	return f.System.WriteFile(p, d, m)
}

// The roots registry is written inside the deploy's transaction: when it
// cannot be saved, the whole apply is rolled back and the error says why,
// so no deploy leaves roots a later deploy could not clean up.
func TestRootsRegistryWriteErrorRollsTheApplyBack(t *testing.T) {
	env := testEnv(t)
	e := engine.New(env, targets.NewSet())
	e.Sys = failRoots{e.Sys}
	_, d, err := e.Deploy(context.Background(), engine.Request{Repo: codexRepo(t)}, true, engine.ApplyOptions{})
	if err == nil || (d != nil && d.Applied) {
		t.Fatalf("deploy succeeded although the roots registry could not be saved: %+v", d)
	}
	if !strings.Contains(err.Error(), "roots.json") {
		t.Fatalf("the error does not name the roots registry: %v", err)
	}
	for _, f := range []string{filepath.Join(env.Cwd, "AGENTS.md"), filepath.Join(env.Cwd, ".agents", "skills", "s", "SKILL.md")} {
		if _, err := os.Lstat(f); !os.IsNotExist(err) {
			t.Errorf("%s was left behind by a rolled-back apply (%v)", f, err)
		}
	}
	if _, err := os.Lstat(filepath.Join(env.StateDir(), "journal.json")); !os.IsNotExist(err) {
		t.Errorf("the journal is still pending: %v", err)
	}
}

// A rollback puts the roots registry back with the files: undoing the first
// deploy leaves no root registered, and the deploy's record lists the
// registry as agentpack's own state.
func TestRollbackRestoresTheRootsRegistry(t *testing.T) {
	env := testEnv(t)
	e := engine.New(env, targets.NewSet())
	_, d, err := e.Deploy(context.Background(), engine.Request{Repo: codexRepo(t)}, true, engine.ApplyOptions{})
	if err != nil || !d.Applied {
		t.Fatalf("deploy: %v %+v", err, d)
	}
	roots := filepath.Join(env.StateDir(), "roots.json")
	data, err := os.ReadFile(roots)
	if err != nil || !strings.Contains(string(data), env.Cwd) {
		t.Fatalf("deploy did not register its roots: %v %s", err, data)
	}
	snap, err := e.Snapshot(context.Background(), d.SnapshotID)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range snap.Files {
		found = found || (f.Target == "agentpack" && f.Path == roots && f.Manifest)
	}
	if !found {
		t.Fatalf("the deploy's record does not list the roots registry: %+v", snap.Files)
	}
	if _, _, err := e.Rollback(context.Background(), engine.RollbackOptions{Last: true}); err != nil {
		t.Fatal(err)
	}
	data, err = os.ReadFile(roots)
	if err != nil || strings.TrimSpace(string(data)) != "[]" {
		t.Fatalf("after undoing the only deploy, roots.json = %q (%v), want []", data, err)
	}
}

// A link or a folder put where a managed file is, after the plan read it
// and before the file is written, is refused: nothing is written through
// the link or over the folder, and the rest of the deploy is rolled back.
func TestLinkOrFolderAppearingBeforeTheWriteIsRefused(t *testing.T) {
	for _, kind := range []string{"link", "folder"} {
		t.Run(kind, func(t *testing.T) {
			env, e, req, repo := deployedCodexRepo(t)
			extra := filepath.Join(env.Cwd, ".agents/skills/s/extra.txt")
			agents := filepath.Join(env.Cwd, "AGENTS.md")
			outside := filepath.Join(t.TempDir(), "secret")
			mustWrite(t, outside, "keep\n")
			mustWrite(t, filepath.Join(repo, "modules/s/extra.txt"), "x2\n")
			mustWrite(t, filepath.Join(repo, "modules/base/AGENTS.md"), "# base 2\n")
			e.Checkpoint = func(phase string) {
				if phase != "journal written" {
					return
				}
				if err := os.Remove(extra); err != nil {
					t.Fatal(err)
				}
				if kind == "link" {
					err := os.Symlink(outside, extra)
					if err != nil {
						t.Fatal(err)
					}
				} else if err := os.Mkdir(extra, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			_, _, err := e.Deploy(context.Background(), req, true, engine.ApplyOptions{})
			wantCode(t, err, apperr.IOInvalidPath, extra)
			if got := mustRead(t, outside); got != "keep\n" {
				t.Errorf("the link's target = %q, want it untouched", got)
			}
			fi, err := os.Lstat(extra)
			switch {
			case err != nil:
				t.Fatalf("the %s was removed: %v", kind, err)
			case kind == "link" && fi.Mode()&os.ModeSymlink == 0, kind == "folder" && !fi.IsDir():
				t.Errorf("the %s was replaced: mode %v", kind, fi.Mode())
			}
			if got := mustRead(t, agents); got != "# base\n" {
				t.Errorf("AGENTS.md = %q, want the refused deploy rolled back", got)
			}
			noPendingJournal(t, env)
			// The bytes extra.txt had are in a recovery snapshot: once the
			// link or folder is gone, rollback --last puts them back.
			e.Checkpoint = nil
			if err := os.RemoveAll(extra); err != nil {
				t.Fatal(err)
			}
			if _, _, err := e.Rollback(context.Background(), engine.RollbackOptions{Last: true}); err != nil {
				t.Fatal(err)
			}
			if got := mustRead(t, extra); got != "x\n" {
				t.Errorf("extra.txt after rollback --last = %q, want the bytes it had before", got)
			}
		})
	}
}

// A file another program creates where the plan saw nothing, after the
// plan and before the write, is not replaced: the deploy stops with
// E_DRIFT_CONFLICT, the file keeps its bytes, the rest of the deploy is
// rolled back, and the next plan shows the file as one to adopt. So it
// goes for the first create in a folder (made by path) and for a later
// one (made by name in the folder held open since the first).
func TestFileAppearingBeforeItsCreateIsKept(t *testing.T) {
	for name, before := range map[string][]string{"first create in its folder": nil, "later create in its folder": {"new0.txt", "new1.txt"}} {
		t.Run(name, func(t *testing.T) { fileAppearingBeforeItsCreateIsKept(t, before) })
	}
}

// fileAppearingBeforeItsCreateIsKept has new.txt appear before its create,
// the deploy creating the files before first, in the same folder.
func fileAppearingBeforeItsCreateIsKept(t *testing.T, before []string) {
	env, e, req, repo := deployedCodexRepo(t)
	for _, name := range before {
		mustWrite(t, filepath.Join(repo, "modules/s", name), name)
	}
	mustWrite(t, filepath.Join(repo, "modules/s/new.txt"), "new\n")
	mustWrite(t, filepath.Join(repo, "modules/base/AGENTS.md"), "# base 2\n")
	created := filepath.Join(env.Cwd, ".agents/skills/s/new.txt")
	e.Checkpoint = func(phase string) {
		if phase == "journal written" {
			mustWrite(t, created, "mine\n")
		}
	}
	_, _, err := e.Deploy(context.Background(), req, true, engine.ApplyOptions{})
	wantCode(t, err, apperr.DriftConflict, created)
	if got := apperr.As(err).Details["reason_code"]; got != "created_since_plan" {
		t.Errorf("reason_code = %v", got)
	}
	if got := mustRead(t, created); got != "mine\n" {
		t.Errorf("new.txt = %q, want the other program's bytes", got)
	}
	if got := mustRead(t, filepath.Join(env.Cwd, "AGENTS.md")); got != "# base\n" {
		t.Errorf("AGENTS.md = %q, want the refused deploy rolled back", got)
	}
	noPendingJournal(t, env)
	e.Checkpoint = nil
	if _, _, err = e.Deploy(context.Background(), req, true, engine.ApplyOptions{}); apperr.CodeOf(err) != apperr.AdoptConfirmRequired {
		t.Errorf("the next deploy: %v, want E_ADOPT_CONFIRM_REQUIRED for new.txt", err)
	}
}

// An edit made to a managed file after the plan (or a rollback's read)
// and before the write is never lost: updating it, removing it and
// rolling it back all stop with E_DRIFT_CONFLICT changed_since_plan, the
// edit stays, and the rest is rolled back.
func TestEditBeforeTheWriteIsKept(t *testing.T) {
	for _, how := range []string{"update", "remove", "rollback"} {
		t.Run(how, func(t *testing.T) {
			env, e, req, repo := deployedCodexRepo(t)
			extra := filepath.Join(env.Cwd, ".agents/skills/s/extra.txt")
			agents := filepath.Join(env.Cwd, "AGENTS.md")
			run := func() error {
				_, _, err := e.Deploy(context.Background(), req, true, engine.ApplyOptions{})
				return err
			}
			switch how {
			case "update":
				mustWrite(t, filepath.Join(repo, "modules/s/extra.txt"), "x2\n")
				mustWrite(t, filepath.Join(repo, "modules/base/AGENTS.md"), "# base 2\n")
			case "remove":
				if err := os.Remove(filepath.Join(repo, "modules/s/extra.txt")); err != nil {
					t.Fatal(err)
				}
				mustWrite(t, filepath.Join(repo, "modules/base/AGENTS.md"), "# base 2\n")
			case "rollback":
				mustWrite(t, filepath.Join(repo, "modules/s/extra.txt"), "x2\n")
				mustWrite(t, filepath.Join(repo, "modules/base/AGENTS.md"), "# base 2\n")
				if err := run(); err != nil {
					t.Fatal(err)
				}
				run = func() error {
					_, _, err := e.Rollback(context.Background(), engine.RollbackOptions{Last: true})
					return err
				}
			}
			before := mustRead(t, agents)
			e.Checkpoint = func(phase string) {
				if phase == "journal written" {
					mustWrite(t, extra, "my edit\n")
				}
			}
			err := run()
			wantCode(t, err, apperr.DriftConflict, extra)
			if got := apperr.As(err).Details["reason_code"]; got != "changed_since_plan" {
				t.Errorf("reason_code = %v", got)
			}
			if got := mustRead(t, extra); got != "my edit\n" {
				t.Errorf("extra.txt = %q, want the edit kept", got)
			}
			if got := mustRead(t, agents); got != before {
				t.Errorf("AGENTS.md = %q, want %q: the refused %s rolled back", got, before, how)
			}
			noPendingJournal(t, env)
			// The bytes the edit replaced are in a recovery snapshot.
			snaps, _, err := e.Snapshots(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if last := snaps[len(snaps)-1]; last.Kind != "rollback" || last.Files != 1 {
				t.Errorf("newest snapshot = %+v, want the recovery snapshot of extra.txt", last)
			}
		})
	}
}

// A rollback putting back a file a later deploy removed does not replace
// one another program created there in the meantime.
func TestFileAppearingBeforeARollbackRecreatesItIsKept(t *testing.T) {
	env, e, req, repo := deployedCodexRepo(t)
	extra := filepath.Join(env.Cwd, ".agents/skills/s/extra.txt")
	if err := os.Remove(filepath.Join(repo, "modules/s/extra.txt")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.Deploy(context.Background(), req, true, engine.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	e.Checkpoint = func(phase string) {
		if phase == "journal written" {
			mustWrite(t, extra, "mine\n")
		}
	}
	_, _, err := e.Rollback(context.Background(), engine.RollbackOptions{Last: true})
	wantCode(t, err, apperr.DriftConflict, extra)
	if got := mustRead(t, extra); got != "mine\n" {
		t.Errorf("extra.txt = %q, want the other program's bytes", got)
	}
}

// A managed file removed by someone else while a deploy is writing loses
// nobody's bytes: the deploy updating or removing it goes on.
func TestFileRemovedBeforeTheWriteIsNoConflict(t *testing.T) {
	for _, how := range []string{"update", "remove"} {
		t.Run(how, func(t *testing.T) {
			env, e, req, repo := deployedCodexRepo(t)
			extra := filepath.Join(env.Cwd, ".agents/skills/s/extra.txt")
			if how == "update" {
				mustWrite(t, filepath.Join(repo, "modules/s/extra.txt"), "x2\n")
			} else if err := os.Remove(filepath.Join(repo, "modules/s/extra.txt")); err != nil {
				t.Fatal(err)
			}
			e.Checkpoint = func(phase string) {
				if phase == "journal written" {
					if err := os.Remove(extra); err != nil {
						t.Fatal(err)
					}
				}
			}
			if _, _, err := e.Deploy(context.Background(), req, true, engine.ApplyOptions{}); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(extra)
			switch {
			case how == "update" && string(got) != "x2\n":
				t.Errorf("extra.txt = %q, %v; want the update written", got, err)
			case how == "remove" && !os.IsNotExist(err):
				t.Errorf("extra.txt is there: %v", err)
			}
		})
	}
}

// noPendingJournal fails t when an apply left its journal behind: it was
// not finished or rolled back.
func noPendingJournal(t *testing.T, env engine.Env) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(env.AgentpackHome, "state", "journal.json")); !os.IsNotExist(err) {
		t.Errorf("the journal is still pending: %v", err)
	}
}

// An edit made to a managed file after the plan, which kept only its
// hash, and before its bytes are saved in the snapshot is never lost: the
// deploy stops with E_DRIFT_CONFLICT changed_since_plan before anything is
// written or journaled, and leaves no snapshot.
func TestEditBeforeTheSnapshotIsKept(t *testing.T) {
	env, e, req, repo := deployedCodexRepo(t)
	extra := filepath.Join(env.Cwd, ".agents/skills/s/extra.txt")
	agents := filepath.Join(env.Cwd, "AGENTS.md")
	mustWrite(t, filepath.Join(repo, "modules/s/extra.txt"), "x2\n")
	mustWrite(t, filepath.Join(repo, "modules/base/AGENTS.md"), "# base 2\n")
	before, _, err := e.Snapshots(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	agentsBefore := mustRead(t, agents)
	e.Checkpoint = func(phase string) {
		if phase == "planned" {
			mustWrite(t, extra, "my edit\n")
		}
	}
	_, _, err = e.Deploy(context.Background(), req, true, engine.ApplyOptions{})
	wantCode(t, err, apperr.DriftConflict, extra)
	if got := apperr.As(err).Details["reason_code"]; got != "changed_since_plan" {
		t.Errorf("reason_code = %v", got)
	}
	if got := mustRead(t, extra); got != "my edit\n" {
		t.Errorf("extra.txt = %q, want the edit kept", got)
	}
	if got := mustRead(t, agents); got != agentsBefore {
		t.Errorf("AGENTS.md = %q, want %q: nothing is written", got, agentsBefore)
	}
	noPendingJournal(t, env)
	after, _, err := e.Snapshots(context.Background())
	if err != nil || len(after) != len(before) {
		t.Errorf("snapshots %d -> %d (%v), want none made", len(before), len(after), err)
	}
	// Once the edit is taken in (the next plan reads it), the deploy goes
	// on, and rolling it back returns the edit byte for byte.
	e.Checkpoint = nil
	if _, _, err := e.Deploy(context.Background(), req, true, engine.ApplyOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, extra); got != "x2\n" {
		t.Fatalf("extra.txt = %q after the forced deploy", got)
	}
	if _, _, err := e.Rollback(context.Background(), engine.RollbackOptions{Last: true}); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, extra); got != "my edit\n" {
		t.Errorf("extra.txt = %q after the rollback, want the edit back", got)
	}
}

// A plan holds only the hash of the bytes its updates and removals replace
// (a plan of 10,000 updated files holds no copy of them), yet a diff shows
// those bytes and a deploy saves them: rolling it back returns them.
func TestPlanHoldsOnlyTheHashOfWhatItReplaces(t *testing.T) {
	env, e, req, repo := deployedCodexRepo(t)
	ctx := context.Background()
	extra := filepath.Join(env.Cwd, ".agents/skills/s/extra.txt")
	mustWrite(t, filepath.Join(repo, "modules/s/extra.txt"), "x2\n")
	mustWrite(t, filepath.Join(repo, "modules/base/AGENTS.md"), "# base 2\n")
	_, p, err := e.Plan(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	updates := 0
	for _, c := range p.Changes {
		if c.BeforeSHA256 != nil {
			updates++
			if c.Before() != nil {
				t.Errorf("the plan holds the bytes %s replaces", c.Path)
			}
		}
	}
	if updates != 2 {
		t.Fatalf("%d updates planned, want 2", updates)
	}
	shown := diffShown(t, e, req)
	for _, want := range []string{"-x\n+x2\n", "-# base\n+# base 2\n"} {
		if !strings.Contains(shown, want) {
			t.Errorf("the diff does not show %q:\n%s", want, shown)
		}
	}
	if _, _, err := e.Deploy(ctx, req, true, engine.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.Rollback(ctx, engine.RollbackOptions{Last: true}); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, extra); got != "x\n" {
		t.Errorf("extra.txt = %q after the rollback, want %q", got, "x\n")
	}
}

// readsOf counts the reads of one file made through it.
type readsOf struct {
	fsys.System
	path string
	n    *atomic.Int64
}

func (r readsOf) ReadFile(p fsys.AbsPath) ([]byte, error) {
	if p.String() == r.path {
		r.n.Add(1)
	}
	return r.System.ReadFile(p)
}

// A plan of updates does not read a file it replaces whose hash the stat
// cache knows (the hash is all it keeps of it), and a diff of the same
// reads it to show it.
func TestPlanOfUpdatesReadsNoTargetTheStatCacheKnows(t *testing.T) {
	env, e, req, repo := deployedCodexRepo(t)
	ctx := context.Background()
	time.Sleep(150 * time.Millisecond) // past the stat cache's racy window
	if _, _, err := e.Status(ctx, req, nil); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(repo, "modules/s/extra.txt"), "x2\n")
	var n atomic.Int64
	e.Sys = readsOf{e.Sys, filepath.Join(env.Cwd, ".agents/skills/s/extra.txt"), &n}
	_, p, err := e.Plan(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if p.Summary.Update != 1 {
		t.Fatalf("planned %+v, want 1 update", p.Summary)
	}
	if got := n.Load(); got != 0 {
		t.Errorf("the plan read the file it updates %d times", got)
	}
	if _, _, err := e.Diff(ctx, req); err != nil {
		t.Fatal(err)
	}
	if got := n.Load(); got != 1 {
		t.Errorf("the diff read the file it shows %d times, want 1", got)
	}
}

// A deploy reads a file it updates once: to save it in the snapshot,
// checked against the plan's hash; a rollback reads a file it replaces or
// removes once, to save it. Right before the write, a look finding the
// same stat data stands for reading it again; any write since changes
// that data, even one of the same size whose mtime is put back (its ctime
// moves), and is refused, the edit kept.
func TestWriteReadsTheFileItReplacesOnce(t *testing.T) {
	for _, how := range []string{"deploy", "rollback"} {
		for _, edit := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/edit=%v", how, edit), func(t *testing.T) {
				env, e, req, repo := deployedCodexRepo(t)
				ctx := context.Background()
				extra := filepath.Join(env.Cwd, ".agents/skills/s/extra.txt")
				want, kept := "x2\n", "x\n"
				run := func() error {
					_, _, err := e.Deploy(ctx, req, true, engine.ApplyOptions{})
					return err
				}
				mustWrite(t, filepath.Join(repo, "modules/s/extra.txt"), "x2\n")
				if how == "rollback" {
					if err := run(); err != nil {
						t.Fatal(err)
					}
					want, kept = "x\n", "x2\n"
					run = func() error {
						_, _, err := e.Rollback(ctx, engine.RollbackOptions{Last: true})
						return err
					}
				}
				time.Sleep(150 * time.Millisecond) // past the racy window
				if _, _, err := e.Status(ctx, req, nil); err != nil {
					t.Fatal(err) // the stat cache learns the file: a plan reads none
				}
				var n atomic.Int64
				e.Sys = readsOf{e.Sys, extra, &n}
				if edit {
					fi, err := os.Stat(extra)
					if err != nil {
						t.Fatal(err)
					}
					same := strings.Repeat("y", len(kept)-1) + "\n" // the size it has
					e.Checkpoint = func(phase string) {
						if phase == "journal written" {
							mustWrite(t, extra, same)
							if err := os.Chtimes(extra, fi.ModTime(), fi.ModTime()); err != nil {
								t.Fatal(err)
							}
						}
					}
					wantCode(t, run(), apperr.DriftConflict, extra)
					if got := mustRead(t, extra); got != same {
						t.Errorf("extra.txt = %q, want the edit kept", got)
					}
					return
				}
				if err := run(); err != nil {
					t.Fatal(err)
				}
				if got := n.Load(); got != 1 {
					t.Errorf("the %s read the file it replaces %d times, want 1", how, got)
				}
				if got := mustRead(t, extra); got != want {
					t.Fatalf("extra.txt = %q after the %s, want %q", got, how, want)
				}
			})
		}
	}
}
