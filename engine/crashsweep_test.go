package engine_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/engine/plan"
	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/agentpack/agentpack/targets"
)

// The crash sweep runs each transaction in a child process (this test
// binary, re-executed) that dies with exit 137 at a chosen point: after the
// Nth file write, or at a phase boundary. The parent then runs the next
// command's recovery, also in a child that may die again, and checks that
// the files are exactly as before the transaction or exactly as after it,
// with no temp file and no folder left behind.

const crashChildEnv = "AGENTPACK_CRASH_CHILD"

// crashJob is what a child runs.
type crashJob struct {
	Env        engine.Env
	Repo       string
	Op         string // deploy | rollback | recover
	Adopt      bool
	Force      bool
	CrashWrite int    // die after this many target writes (0: never)
	CrashPhase string // die at this phase boundary ("": never)
	// CountFile, when set, receives the number of target writes made.
	CountFile string
}

func TestCrashChild(t *testing.T) {
	raw := os.Getenv(crashChildEnv)
	if raw == "" {
		t.Skip("only runs as the child of the crash sweep")
	}
	var job crashJob
	if err := json.Unmarshal([]byte(raw), &job); err != nil {
		t.Fatal(err)
	}
	e := engine.New(job.Env, targets.NewSet())
	var writes atomic.Int64
	if rs, ok := e.Sys.(*fsys.RealSystem); ok {
		state := fsys.AbsPath(job.Env.AgentpackHome)
		rs.SetAfterWrite(func(p fsys.AbsPath) {
			if state.Contains(p) {
				return // agentpack's own state (stat cache, roots), not a target write
			}
			if writes.Add(1) == int64(job.CrashWrite) {
				os.Exit(137)
			}
		})
	}
	e.Checkpoint = func(phase string) {
		if phase == job.CrashPhase {
			os.Exit(137)
		}
	}
	var err error
	switch job.Op {
	case "deploy":
		_, _, err = e.Deploy(context.Background(), engine.Request{Repo: job.Repo}, true, engine.ApplyOptions{Adopt: job.Adopt, Force: job.Force})
	case "rollback":
		_, _, err = e.Rollback(context.Background(), engine.RollbackOptions{Last: true})
	case "recover":
		_, _, err = e.Snapshots(context.Background())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	if job.CountFile != "" {
		_ = os.WriteFile(job.CountFile, []byte(strconv.FormatInt(writes.Load(), 10)), 0o644)
	}
	os.Exit(0)
}

// runCrashChild runs job in a child and returns its exit code.
func runCrashChild(t *testing.T, job crashJob) int {
	t.Helper()
	raw, _ := json.Marshal(job)
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+string(raw))
	out, err := cmd.CombinedOutput()
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exec.ExitError); ok {
		if ee.ExitCode() == 3 {
			t.Fatalf("%s failed: %s", job.Op, out)
		}
		return ee.ExitCode()
	}
	t.Fatalf("child: %v\n%s", err, out)
	return -1
}

// fileTree describes every folder, file (bytes and mode) and link under the
// home and project of env, leaving out agentpack's own state.
func fileTree(t *testing.T, env engine.Env) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, root := range []string{env.Home, env.Cwd} {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if p == env.AgentpackHome {
				return filepath.SkipDir
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			switch {
			case d.Type()&fs.ModeSymlink != 0:
				target, _ := os.Readlink(p)
				out[p] = "link " + target
			case d.IsDir():
				out[p] = "dir"
			default:
				data, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				if plan.IsTargetManifestName(d.Name()) {
					// generated_at and snapshot_id differ between runs; what
					// the manifest owns must not.
					var m plan.TargetManifest
					if err := json.Unmarshal(data, &m); err != nil {
						return err
					}
					data, _ = json.Marshal(m.ManagedFiles)
				}
				sum := sha256.Sum256(data)
				out[p] = fmt.Sprintf("file %o %s", fi.Mode().Perm(), hex.EncodeToString(sum[:8]))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// The roots registry is state, but the transaction writes it with the
	// files: it too must be exactly as before or exactly as after.
	if data, err := os.ReadFile(filepath.Join(env.StateDir(), "roots.json")); err == nil {
		var roots []struct{ Target, Root string }
		if err := json.Unmarshal(data, &roots); err != nil {
			t.Fatalf("roots.json: %v", err)
		}
		var keys []string
		for _, r := range roots {
			// Runs compared with each other live in different temp folders.
			keys = append(keys, r.Target+":"+strings.NewReplacer(env.Cwd, "$PROJ", env.Home, "$HOME").Replace(r.Root))
		}
		out["state/roots.json"] = strings.Join(keys, ",")
	}
	return out
}

func sameTree(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func treeDiff(a, b map[string]string) string {
	var out []string
	for k, v := range a {
		if b[k] != v {
			out = append(out, fmt.Sprintf("%s: %q vs %q", k, v, b[k]))
		}
	}
	for k, v := range b {
		if _, ok := a[k]; !ok {
			out = append(out, fmt.Sprintf("%s: missing vs %q", k, v))
		}
	}
	return strings.Join(out, "\n")
}

// crashScenario prepares the disk before one transaction and names it.
type crashScenario struct {
	name  string
	op    string
	adopt bool
	force bool
	setup func(t *testing.T, e *engine.Engine, env engine.Env, repo string)
}

func deployOK(t *testing.T, e *engine.Engine, repo string) {
	t.Helper()
	if _, _, err := e.Deploy(context.Background(), engine.Request{Repo: repo}, true, engine.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
}

var crashScenarios = []crashScenario{
	{name: "create", op: "deploy", setup: func(*testing.T, *engine.Engine, engine.Env, string) {}},
	{name: "update", op: "deploy", setup: func(t *testing.T, e *engine.Engine, env engine.Env, repo string) {
		deployOK(t, e, repo)
		mustWrite(t, filepath.Join(repo, "modules/s/extra.txt"), "x2\n")
		mustWrite(t, filepath.Join(repo, "modules/s/deep/new.txt"), "new\n")
	}},
	{name: "delete", op: "deploy", setup: func(t *testing.T, e *engine.Engine, env engine.Env, repo string) {
		deployOK(t, e, repo)
		yaml := mustRead(t, filepath.Join(repo, "agentpack.yaml"))
		mustWrite(t, filepath.Join(repo, "agentpack.yaml"), yaml[:strings.Index(yaml, "  - id: skill:s")])
	}},
	{name: "adopt", op: "deploy", adopt: true, setup: func(t *testing.T, e *engine.Engine, env engine.Env, repo string) {
		mustWrite(t, filepath.Join(env.Cwd, "AGENTS.md"), "my own notes\n")
	}},
	{name: "force", op: "deploy", force: true, setup: func(t *testing.T, e *engine.Engine, env engine.Env, repo string) {
		deployOK(t, e, repo)
		mustWrite(t, filepath.Join(env.Cwd, ".agents/skills/s/extra.txt"), "hand edit\n")
		mustWrite(t, filepath.Join(repo, "modules/s/extra.txt"), "x2\n")
	}},
	{name: "rollback", op: "rollback", setup: func(t *testing.T, e *engine.Engine, env engine.Env, repo string) {
		deployOK(t, e, repo)
		mustWrite(t, filepath.Join(repo, "modules/s/deep/new.txt"), "new\n")
		deployOK(t, e, repo)
	}},
}

var crashPhases = []string{"pack saved", "journal written", "files written", "record saved", "journal removed"}

// prepare builds a scenario in a fresh env and returns it with its repo.
func (sc crashScenario) prepare(t *testing.T) (engine.Env, string) {
	env := testEnv(t)
	repo := codexRepo(t)
	sc.setup(t, engine.New(env, targets.NewSet()), env, repo)
	return env, repo
}

func (sc crashScenario) job(env engine.Env, repo string) crashJob {
	return crashJob{Env: env, Repo: repo, Op: sc.op, Adopt: sc.adopt, Force: sc.force}
}

// checkLeftovers fails on temp files anywhere and on a journal left behind.
func checkLeftovers(t *testing.T, env engine.Env, what string) {
	t.Helper()
	for _, root := range []string{env.Home, env.Cwd} {
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && (strings.HasPrefix(d.Name(), ".agentpack-tmp-") || strings.Contains(d.Name(), ".tmp")) {
				t.Errorf("%s: temp file %s left behind", what, p)
			}
			return nil
		})
	}
	if _, err := os.Stat(filepath.Join(env.AgentpackHome, "state", "journal.json")); err == nil {
		t.Errorf("%s: journal left behind", what)
	}
}

func TestCrashSweep(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns many processes")
	}
	for _, sc := range crashScenarios {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			// The reference: the transaction run to its end.
			env, repo := sc.prepare(t)
			pre := fileTree(t, env)
			ref := sc.job(env, repo)
			ref.CountFile = filepath.Join(t.TempDir(), "writes")
			if code := runCrashChild(t, ref); code != 0 {
				t.Fatalf("reference run exited %d", code)
			}
			nWrites, _ := strconv.Atoi(mustRead(t, ref.CountFile))
			post := fileTree(t, env)
			if sameTree(pre, post) {
				t.Fatal("the scenario changes nothing")
			}
			shift := func(pre map[string]string, from, to engine.Env) map[string]string {
				out := map[string]string{}
				r := strings.NewReplacer(from.Home, to.Home, from.Cwd, to.Cwd)
				for k, v := range pre {
					out[r.Replace(k)] = v
				}
				return out
			}
			var points []crashJob
			for n := 1; n <= nWrites; n++ {
				j := sc.job(engine.Env{}, "")
				j.CrashWrite = n
				points = append(points, j)
			}
			for _, ph := range crashPhases {
				j := sc.job(engine.Env{}, "")
				j.CrashPhase = ph
				points = append(points, j)
			}
			for _, point := range points {
				label := "write " + strconv.Itoa(point.CrashWrite)
				if point.CrashPhase != "" {
					label = point.CrashPhase
				}
				// Recovery may die after each of its own writes, then a last
				// recovery runs to the end.
				for second := 0; second <= 4; second++ {
					env2, repo2 := sc.prepare(t)
					wantPre, wantPost := shift(pre, env, env2), shift(post, env, env2)
					point.Env, point.Repo = env2, repo2
					if code := runCrashChild(t, point); code == 0 {
						break // fewer writes than n: the run completed
					}
					if second > 0 {
						rec := crashJob{Env: env2, Op: "recover", CrashWrite: second}
						if runCrashChild(t, rec) == 0 {
							break // recovery needed fewer writes
						}
					}
					if code := runCrashChild(t, crashJob{Env: env2, Op: "recover"}); code != 0 {
						t.Fatalf("%s: recovery exited %d", label, code)
					}
					got := fileTree(t, env2)
					if !sameTree(got, wantPre) && !sameTree(got, wantPost) {
						t.Fatalf("%s (second crash after %d): the files are neither as before nor as after the %s:\nvs before:\n%s\nvs after:\n%s",
							label, second, sc.name, treeDiff(got, wantPre), treeDiff(got, wantPost))
					}
					checkLeftovers(t, env2, label)
				}
			}
		})
	}
}
