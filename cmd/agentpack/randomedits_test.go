package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
)

// The random tests of this file share one world (editworld_test.go): the
// quickstart repo with an MCP server module, two projects and a home; and
// one set of steps (editops_test.go) that edit its sources, overlays,
// deployed files and shared config files in the ways a cache keyed by stat
// data could miss, deploy and roll back between them.

// TestCachesAgreeUnderRandomEdits edits the sources and the deployed files
// at random, in the ways the caches could miss (same size with the old
// mtime put back, a new inode under the same name, only the mode, only the
// times, a file added or removed in a folder, an overlay, a config entry,
// the manifest), and deploys and rolls back between them. After each step,
// status, plan, diff and the deploy preview through the CLI with every
// cache it keeps (source cache, stat cache, folder listings, decoded
// manifests, kept answers, a state taken from a project beside) must say
// what they say with none of them, status and plan must agree, and
// their --exit-code must say whether there is anything to do. Steps also move to a second project
// and change the profile and the targets asked for. Half the steps wait
// out the racy window first, so the caches trust what they recorded.
//
// AGENTPACK_TEST_SEED replays a run (its seed is logged);
// AGENTPACK_TEST_STEPS runs more steps.
func TestCachesAgreeUnderRandomEdits(t *testing.T) {
	w := newEditWorld(t)
	w.switches = true
	w.run("deploy", "--apply", "--yes")
	w.steps(func(step int, what string) {
		got := map[string]answer{}
		for _, cmd := range []string{"status", "status", "plan", "diff", "deploy"} {
			got[cmd] = w.run(cmd)
			w.agree(step, what, cmd, got[cmd])
			w.runHuman(cmd)
		}
		if problem := statusCoversPlan(got["status"], got["plan"]); problem != "" {
			t.Fatalf("step %d (%s): %s (replay with AGENTPACK_TEST_SEED=%d)", step, what, problem, w.seed)
		}
		// CI's --exit-code: 2 when there is something to do, 0 when not.
		for cmd, list := range map[string]string{"status": "drift", "plan": "changes"} {
			if !got[cmd].OK {
				continue
			}
			want := 0
			if len(got[cmd].Data.(map[string]any)[list].([]any)) > 0 {
				want = 2
			}
			if code := w.exitCode(cmd, "--exit-code"); code != want {
				t.Fatalf("step %d (%s): %s --exit-code exits %d, want %d (replay with AGENTPACK_TEST_SEED=%d)", step, what, cmd, code, want, w.seed)
			}
		}
	})
}

// statusCoversPlan says how status and plan disagree, "" when they do not:
// every path the plan changes is drift in status, and every path status
// calls pending the plan changes. (Status may say more: a managed file
// missing or edited that no module writes any more is drift the plan has
// nothing to do about.)
func statusCoversPlan(status, plan answer) string {
	if !status.OK || !plan.OK {
		return ""
	}
	drift := map[string]string{}
	for _, item := range status.Data.(map[string]any)["drift"].([]any) {
		it := item.(map[string]any)
		drift[it["path"].(string)] = it["kind"].(string)
	}
	changed := map[string]bool{}
	for _, change := range plan.Data.(map[string]any)["changes"].([]any) {
		path := change.(map[string]any)["path"].(string)
		changed[path] = true
		if kind, ok := drift[path]; !ok || kind == "extra" {
			return fmt.Sprintf("the plan changes %s, which status calls %q", path, kind)
		}
	}
	for path, kind := range drift {
		if kind == "pending" && !changed[path] {
			return fmt.Sprintf("status calls %s pending, which the plan does not change", path)
		}
	}
	return ""
}

// TestMCPCacheAgreesUnderRandomEdits is TestCachesAgreeUnderRandomEdits
// for one long-lived MCP server, as an IDE keeps it: its in-memory cache of
// compiled states, trusted while its file watcher hears nothing, must
// answer status, plan and diff as the CLI does with no cache at all, while
// the edits, deploys and rollbacks come from other processes.
func TestMCPCacheAgreesUnderRandomEdits(t *testing.T) {
	w := newEditWorld(t)
	w.run("deploy", "--apply", "--yes")
	call := w.mcpSession(false)
	w.steps(func(step int, what string) {
		for _, tool := range []string{"status", "plan", "status", "diff"} {
			w.agree(step, what, tool, call(tool, nil))
		}
	})
}

// TestMCPDeployApplyUnderRandomEdits: through one long-lived MCP server
// with its cache, after each random step a deploy preview issues a
// confirm token, sometimes another edit follows, then deploy_apply
// (--force --adopt) either refuses without writing anything (the plan is
// no longer the one confirmed) or leaves everything in sync: a plan made
// with no cache at all has nothing to do.
func TestMCPDeployApplyUnderRandomEdits(t *testing.T) {
	w := newEditWorld(t)
	w.run("deploy", "--apply", "--yes")
	call := w.mcpSession(true)
	ops := w.ops()
	var rng *rand.Rand
	w.steps(func(step int, what string) {
		if rng == nil {
			rng = rand.New(rand.NewPCG(w.seed, 1))
		}
		preview := call("deploy", nil)
		data, _ := preview.Data.(map[string]any)
		token, _ := data["confirm_token"].(string)
		if !preview.OK || token == "" {
			t.Fatalf("step %d (%s): deploy preview:\n%s", step, what, indent(preview))
		}
		if rng.IntN(2) == 0 {
			if op := ops[rng.IntN(len(ops))]; op.name != "deploy" && op.name != "rollback" {
				what += "; then " + op.name + ": " + op.do(rng)
			}
		}
		before := w.tree(false)
		applied := call("deploy_apply", map[string]any{"yes": true, "confirm_token": token, "force": true, "adopt": true})
		if !applied.OK {
			if errorCode(applied) != "E_CONFIRM_TOKEN_MISMATCH" {
				t.Fatalf("step %d (%s): deploy_apply:\n%s\n(replay with AGENTPACK_TEST_SEED=%d)", step, what, indent(applied), w.seed)
			}
			if after := w.tree(false); !reflect.DeepEqual(before, after) {
				t.Fatalf("step %d (%s): a refused deploy_apply changed files (replay with AGENTPACK_TEST_SEED=%d)", step, what, w.seed)
			}
			if testing.Verbose() {
				t.Logf("step %d: deploy_apply refused: the plan changed (%s)", step, what)
			}
			return
		}
		if testing.Verbose() {
			t.Logf("step %d: deploy_apply applied (%s)", step, what)
		}
		if p := w.runWithoutCaches("plan"); !p.OK || len(p.Data.(map[string]any)["changes"].([]any)) != 0 {
			t.Fatalf("step %d (%s): deploy_apply succeeded, then a plan with no cache says\n%s\n(replay with AGENTPACK_TEST_SEED=%d)", step, what, indent(p), w.seed)
		}
	})
}

// TestDeployThenRollbackRestoresUnderRandomEdits: after each of the random
// steps (edited, removed and extra files, changed modes, overlays, config
// entries, other profiles, targets and projects), a deploy that may
// replace anything (--force --adopt) followed by `rollback --last` leaves
// every file and folder of the projects and the home as it was before the
// deploy: the same bytes, mode and presence. Between the two, plan and
// status find everything in sync, and the diff shown before the deploy is
// what it wrote. Each is run with --dry-run first, which
// changes nothing (agentpack's own state included) and shows the changes
// the real one then makes.
func TestDeployThenRollbackRestoresUnderRandomEdits(t *testing.T) {
	w := newEditWorld(t)
	w.switches = true
	w.run("deploy", "--apply", "--yes")
	w.steps(func(step int, what string) {
		fail := func(format string, args ...any) {
			t.Helper()
			t.Fatalf("step %d (%s): %s\n(replay with AGENTPACK_TEST_SEED=%d)", step, what, fmt.Sprintf(format, args...), w.seed)
		}
		before, users := w.tree(false), w.usersConfig()
		shown := w.run("diff")
		deploy := []string{"deploy", "--apply", "--yes", "--force", "--adopt"}
		dry := w.dryRun(fail, deploy...)
		d := w.run(deploy...)
		if !d.OK {
			fail("deploy --force --adopt failed: %v", d.Errors)
		}
		if problem := diffShowsDeploy(shown, before); problem != "" {
			fail("%s", problem)
		}
		// The user's part of a shared config file is theirs: the deploy
		// changes only agentpack's entry (a file it removes, it had made).
		after := w.usersConfig()
		for path, was := range users {
			if now, ok := after[path]; ok && now != was || !ok && was != "{}" {
				fail("the deploy changed the user's part of %s:\n%s\nwas\n%s", path, now, was)
			}
		}
		data, _ := d.Data.(map[string]any)
		if !reflect.DeepEqual(dry.Data.(map[string]any)["changes"], data["changes"]) {
			fail("deploy --dry-run showed\n%s\nthe deploy made\n%s", indent(dry), indent(d))
		}
		if data["snapshot_id"] == nil {
			return // nothing to do
		}
		// What the deploy left is in sync: nothing to plan, nothing in
		// status but files no module writes.
		if p := w.runWithoutCaches("plan"); !p.OK || len(p.Data.(map[string]any)["changes"].([]any)) != 0 {
			fail("a plan right after deploy --force --adopt says\n%s", indent(p))
		}
		st := w.runWithoutCaches("status")
		for _, item := range st.Data.(map[string]any)["drift"].([]any) {
			if kind := item.(map[string]any)["kind"]; kind != "extra" {
				fail("status right after deploy --force --adopt says\n%s", indent(st))
			}
		}
		rollback := []string{"rollback", "--last", "--yes"}
		dry = w.dryRun(fail, rollback...)
		r := w.run(rollback...)
		if !r.OK {
			fail("rollback failed: %v", r.Errors)
		}
		if !reflect.DeepEqual(dry.Data.(map[string]any)["files"], r.Data.(map[string]any)["files"]) {
			fail("rollback --dry-run showed\n%s\nthe rollback did\n%s", indent(dry), indent(r))
		}
		if diff := treeDiff(before, w.tree(false)); diff != "" {
			fail("deploy and rollback changed\n%s", diff)
		}
	})
}

// diffShowsDeploy says where a diff, shown when the files were as in
// before (editWorld.tree), is not what the deploy after it wrote: each
// unified diff applied to the bytes the file had gives the bytes it has
// now ("" when every one does). Entry-level diffs of shared config files
// and files left without a diff (binary, too large) are not checked.
func diffShowsDeploy(shown answer, before map[string]string) string {
	if !shown.OK {
		return ""
	}
	for _, change := range shown.Data.(map[string]any)["changes"].([]any) {
		c := change.(map[string]any)
		unified, _ := c["unified"].(string)
		path := c["path"].(string)
		if !strings.Contains(unified, "\n@@ ") || c["entries"] != nil || c["op"] == "delete" {
			continue // no hunk: the file's mode alone changes
		}
		files, _, err := gitdiff.Parse(strings.NewReader(unified))
		if err != nil || len(files) != 1 {
			return fmt.Sprintf("the diff of %s does not parse (%v):\n%s", path, err, unified)
		}
		old := ""
		if v, ok := before[path]; ok {
			old = v[strings.Index(v, " ")+1:] // after the mode
		}
		var patched bytes.Buffer
		if err := gitdiff.Apply(&patched, strings.NewReader(old), files[0]); err != nil {
			return fmt.Sprintf("the diff of %s does not apply to its bytes (%v):\n%s", path, err, unified)
		}
		if now, err := os.ReadFile(path); err != nil || !bytes.Equal(now, patched.Bytes()) {
			return fmt.Sprintf("the diff of %s gives\n%q\nthe deploy wrote\n%q", path, patched.Bytes(), now)
		}
	}
	return ""
}

// dryRun runs args with --dry-run, which must succeed and change no file
// or folder, agentpack's own state included (its caches may be filled, as
// by plan).
func (w *editWorld) dryRun(fail func(string, ...any), args ...string) answer {
	before := w.tree(true)
	a := w.run(append(args, "--dry-run")...)
	if !a.OK {
		fail("%q --dry-run failed: %v", args, a.Errors)
	}
	if diff := treeDiff(before, w.tree(true)); diff != "" {
		fail("%q --dry-run changed\n%s", args, diff)
	}
	return a
}

// treeDiff says how two trees (editWorld.tree) differ, "" when they do not.
func treeDiff(before, after map[string]string) string {
	var diff []string
	for p, b := range before {
		if a, ok := after[p]; !ok || a != b {
			diff = append(diff, fmt.Sprintf("%s: %q before, %q after", p, b, after[p]))
		}
	}
	for p, a := range after {
		if _, ok := before[p]; !ok {
			diff = append(diff, fmt.Sprintf("%s: none before, %q after", p, a))
		}
	}
	slices.Sort(diff)
	return strings.Join(diff, "\n")
}

// TestRollbackToAnyDeployUnderRandomEdits: after each random step a deploy
// (--force --adopt) records, for its snapshot, every target manifest and
// the bytes of every file they list (but the config files agentpack
// shares with the user, whose other entries are the user's); now and then
// `rollback --to` one of those snapshots, however many deploys, rollbacks
// and edits came after, puts every one of them back byte for byte.
func TestRollbackToAnyDeployUnderRandomEdits(t *testing.T) {
	w := newEditWorld(t)
	// One project, profile and every target: each step's deploy then
	// records every edit of a managed file before the rollback comes. No
	// prune: the bytes a file had right after a deploy that did not write
	// it are in the snapshot that last did, and once that one is pruned
	// the rollback can only put back what the next deploy found there (a
	// hand edit made since).
	w.keepSnapshots = true
	w.run("deploy", "--apply", "--yes")
	deployed := map[string]map[string]string{} // snapshot id → path → bytes
	var ids []string
	var rng *rand.Rand
	w.steps(func(step int, what string) {
		fail := func(format string, args ...any) {
			t.Helper()
			t.Fatalf("step %d (%s): %s\n(replay with AGENTPACK_TEST_SEED=%d)", step, what, fmt.Sprintf(format, args...), w.seed)
		}
		if rng == nil {
			rng = rand.New(rand.NewPCG(w.seed, 2))
		}
		d := w.run("deploy", "--apply", "--yes", "--force", "--adopt")
		if !d.OK {
			fail("deploy --force --adopt failed: %v", d.Errors)
		}
		if id, ok := d.Data.(map[string]any)["snapshot_id"].(string); ok {
			deployed[id] = w.managed(t)
			ids = append(ids, id)
		}
		if len(ids) == 0 || rng.IntN(4) != 0 {
			return
		}
		id := ids[rng.IntN(len(ids))]
		r := w.run("rollback", "--to", id, "--yes")
		if !r.OK {
			fail("rollback --to %s failed: %v", id, r.Errors)
		}
		now := w.managed(nil)
		for path, want := range deployed[id] {
			if got, ok := now[path]; !ok || got != want {
				data, _ := os.ReadFile(path)
				fail("after rollback --to %s, %s has\n%q\nnot, as right after that deploy,\n%q", id, path, data, want)
			}
		}
	})
}

// errorCode is the code of a's one error, or "".
func errorCode(a answer) string {
	errs, _ := a.Errors.([]any)
	if len(errs) != 1 {
		return ""
	}
	code, _ := errs[0].(map[string]any)["code"].(string)
	return code
}

// managed is every target manifest of the projects and the home and every
// file they list but shared config files: path → bytes. With t, it is as
// the deploy just left it, so every listed file is there; without, a
// file missing is left out.
func (w *editWorld) managed(t *testing.T) map[string]string {
	out := map[string]string{}
	for _, root := range []string{w.projects[0], w.projects[1], w.home} {
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() && p == w.apHome {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasPrefix(d.Name(), ".agentpack.manifest.") {
				return nil
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[p] = string(data)
			var m struct {
				Files []struct {
					Path    string `json:"path"`
					Entries []any  `json:"entries"`
				} `json:"managed_files"`
			}
			if err := json.Unmarshal(data, &m); err != nil {
				return err
			}
			for _, f := range m.Files {
				if f.Entries != nil {
					continue
				}
				file := filepath.Join(filepath.Dir(p), filepath.FromSlash(f.Path))
				data, err := os.ReadFile(file)
				switch {
				case err == nil:
					out[file] = string(data)
				case t != nil:
					t.Fatalf("%s lists %s: %v", p, f.Path, err)
				}
			}
			return nil
		})
	}
	return out
}
