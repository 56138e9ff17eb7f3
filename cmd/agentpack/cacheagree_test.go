package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestCachesAgreeUnderRandomEdits edits the sources and the deployed files
// of the quickstart repo at random, in the ways the caches could miss (same
// size with the old mtime put back, a new inode under the same name, only
// the mode, only the times, a file added or removed in a folder, the
// manifest), and deploys and rolls back between them. After each step,
// status, plan, diff and the deploy preview through the CLI with every
// cache it keeps (source cache, stat cache, folder listings, decoded
// manifests, kept answers, a state taken from a project beside) must say
// what they say with none of them. Steps also move to a second project
// and change the profile and the targets asked for. Half the steps wait
// out the racy window first, so the caches trust what they recorded.
//
// AGENTPACK_TEST_SEED replays a run (its seed is logged);
// AGENTPACK_TEST_STEPS runs more steps.
func TestCachesAgreeUnderRandomEdits(t *testing.T) {
	w := newCacheWorld(t)
	w.switches = true
	w.run("deploy", "--apply", "--yes")
	w.steps(func(step int, what string) {
		for _, cmd := range []string{"status", "status", "plan", "diff", "deploy"} {
			w.agree(step, what, cmd, w.run(cmd))
		}
	})
}

// TestMCPCacheAgreesUnderRandomEdits is TestCachesAgreeUnderRandomEdits
// for one long-lived MCP server, as an IDE keeps it: its in-memory cache of
// compiled states, trusted while its file watcher hears nothing, must
// answer status, plan and diff as the CLI does with no cache at all, while
// the edits, deploys and rollbacks come from other processes.
func TestMCPCacheAgreesUnderRandomEdits(t *testing.T) {
	w := newCacheWorld(t)
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
	w := newCacheWorld(t)
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
		before := w.tree()
		applied := call("deploy_apply", map[string]any{"yes": true, "confirm_token": token, "force": true, "adopt": true})
		if !applied.OK {
			errs, _ := applied.Errors.([]any)
			code := ""
			if len(errs) == 1 {
				code, _ = errs[0].(map[string]any)["code"].(string)
			}
			if code != "E_CONFIRM_TOKEN_MISMATCH" {
				t.Fatalf("step %d (%s): deploy_apply:\n%s\n(replay with AGENTPACK_TEST_SEED=%d)", step, what, indent(applied), w.seed)
			}
			if after := w.tree(); !reflect.DeepEqual(before, after) {
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

// mcpSession starts one MCP server on the world's repo and project, as an
// IDE keeps it (write tools with allowWrite), and returns a client call.
func (w *cacheWorld) mcpSession(allowWrite bool) func(tool string, args map[string]any) answer {
	t := w.t
	app := &App{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard, Env: engine.EnvFromOS()}
	app.Globals.JSON = true
	// The cache's own racy window (2 s) would leave it empty through
	// steps this close together; its fine-grained-time one is the CLI's.
	cache := engine.NewLoadCache()
	cache.Racy = 100 * time.Millisecond
	srv, err := mcpserver.New(mcpserver.Options{Env: app.Env, NewEngine: app.newEngine, Defaults: engine.Request{Repo: w.repo},
		LoadCache: cache, AllowWrite: allowWrite})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait(); cache.Close() })
	return func(tool string, args map[string]any) answer {
		t.Helper()
		if args == nil {
			args = map[string]any{}
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			t.Fatalf("call %s: %v", tool, err)
		}
		return answerOf(t, res.StructuredContent)
	}
}

// steps makes the test's random edits, calling check after each.
func (w *cacheWorld) steps(check func(step int, what string)) {
	w.seed = uint64(time.Now().UnixNano())
	if s := os.Getenv("AGENTPACK_TEST_SEED"); s != "" {
		w.seed, _ = strconv.ParseUint(s, 10, 64)
	}
	steps := 60
	if s, err := strconv.Atoi(os.Getenv("AGENTPACK_TEST_STEPS")); err == nil {
		steps = s
	}
	w.t.Logf("AGENTPACK_TEST_SEED=%d", w.seed)
	rng := rand.New(rand.NewPCG(w.seed, 0))
	ops := w.ops()
	for step := range steps {
		op := ops[rng.IntN(len(ops))]
		what := op.name + ": " + op.do(rng)
		if testing.Verbose() {
			w.t.Logf("step %d: %s", step, what)
		}
		if rng.IntN(2) == 0 {
			time.Sleep(150 * time.Millisecond) // past the caches' racy window
		}
		check(step, what)
	}
}

// agree fails the test unless got, cmd's answer after step, is what the
// CLI answers with every cache moved aside.
func (w *cacheWorld) agree(step int, what, cmd string, got answer) {
	w.t.Helper()
	if cold := w.runWithoutCaches(cmd); !reflect.DeepEqual(got, cold) {
		w.t.Fatalf("step %d (%s): %s with caches says\n%s\nwithout them\n%s\n(replay with AGENTPACK_TEST_SEED=%d)",
			step, what, cmd, indent(got), indent(cold), w.seed)
	}
}

// cacheWorld is a repo, a project and a home the test edits.
type cacheWorld struct {
	t                        *testing.T
	repo, proj, home, apHome string
	n                        int    // names new files
	seed                     uint64 // the random edits' (logged)
	// switches adds steps that move to the other project (projects[1]
	// when in projects[0]) and change the profile and the targets every
	// command asks for (flags).
	switches bool
	projects [2]string
	flags    []string
}

func newCacheWorld(t *testing.T) *cacheWorld {
	root := t.TempDir()
	w := &cacheWorld{t: t, repo: filepath.Join(root, "repo"), proj: filepath.Join(root, "proj"), home: filepath.Join(root, "home")}
	w.apHome = filepath.Join(w.home, ".agentpack")
	w.projects = [2]string{w.proj, filepath.Join(root, "proj2")}
	if err := os.CopyFS(w.repo, os.DirFS("../../fixtures/quickstart")); err != nil {
		t.Fatal(err)
	}
	// An MCP server too: each target owns one entry of a config file it
	// shares with the user (keyed files).
	mcpModule := filepath.Join(w.repo, "modules", "mcp", "fs.yaml")
	if err := os.MkdirAll(filepath.Dir(mcpModule), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mcpModule, []byte("name: fs\ncommand: npx\nargs: [\"-y\", \"@modelcontextprotocol/server-filesystem\", \".\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(w.repo, "agentpack.yaml"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("  - id: mcp:fs\n    type: mcp\n    tags: [base]\n    source:\n      local_path:\n        path: modules/mcp/fs.yaml\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{w.home, filepath.Join(w.projects[0], ".git"), filepath.Join(w.projects[1], ".git")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HOME", w.home)
	t.Setenv("AGENTPACK_HOME", w.apHome)
	t.Setenv("CODEX_HOME", "")
	t.Setenv("NO_COLOR", "1")
	t.Chdir(w.proj)
	return w
}

// answer is what a command's envelope says, less what names the run.
type answer struct {
	OK       bool
	Data     any
	Warnings any
	Errors   any
}

func indent(a answer) string {
	out, _ := json.MarshalIndent(a, "", "  ")
	return string(out)
}

// run runs agentpack --json with args against the repo, in process.
func (w *cacheWorld) run(args ...string) answer {
	w.t.Helper()
	var stdout, stderr bytes.Buffer
	Main(slices.Concat([]string{"--repo", w.repo, "--json"}, w.flags, args), strings.NewReader(""), &stdout, &stderr)
	var env any
	if err := json.Unmarshal(stdout.Bytes(), &env); err != nil {
		w.t.Fatalf("agentpack %q: %v\nstdout %s\nstderr %s", args, err, stdout.String(), stderr.String())
	}
	return answerOf(w.t, env)
}

// answerOf is the answer of an envelope decoded from JSON.
func answerOf(t *testing.T, envelope any) answer {
	t.Helper()
	env, ok := envelope.(map[string]any)
	if !ok {
		t.Fatalf("not an envelope: %v", envelope)
	}
	ok, _ = env["ok"].(bool)
	return answer{ok, env["data"], env["warnings"], env["errors"]}
}

// cacheDirs are where agentpack keeps what it can compute again.
func (w *cacheWorld) cacheDirs() []string {
	return []string{filepath.Join(w.apHome, "cache"), filepath.Join(w.apHome, "state", "statcache")}
}

// runWithoutCaches is run with every cache moved aside, and put back after.
func (w *cacheWorld) runWithoutCaches(args ...string) answer {
	w.t.Helper()
	for _, d := range w.cacheDirs() {
		if err := os.Rename(d, d+".aside"); err != nil && !os.IsNotExist(err) {
			w.t.Fatal(err)
		}
	}
	defer func() {
		for _, d := range w.cacheDirs() {
			if err := os.RemoveAll(d); err != nil {
				w.t.Fatal(err)
			}
			if err := os.Rename(d+".aside", d); err != nil && !os.IsNotExist(err) {
				w.t.Fatal(err)
			}
		}
	}()
	return w.run(args...)
}

// files lists the regular files under dirs, leaving out agentpack's own
// (its home, target manifests) and git's.
func (w *cacheWorld) files(dirs ...string) []string {
	var out []string
	for _, dir := range dirs {
		_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			switch {
			case err != nil:
				return nil
			case d.IsDir() && (p == w.apHome || d.Name() == ".git"):
				return filepath.SkipDir
			case d.Type().IsRegular() && !strings.HasPrefix(d.Name(), ".agentpack"):
				out = append(out, p)
			}
			return nil
		})
	}
	slices.Sort(out)
	return out
}

func (w *cacheWorld) sources() []string { return w.files(filepath.Join(w.repo, "modules")) }

// textSources are the sources a byte may change in (not the MCP module's
// YAML, which the "mcp module" step edits).
func (w *cacheWorld) textSources() []string {
	return slices.DeleteFunc(w.sources(), func(p string) bool { return filepath.Ext(p) == ".yaml" })
}
func (w *cacheWorld) targets() []string { return w.files(w.projects[0], w.projects[1], w.home) }

// configs are the target files agentpack shares with the user (an MCP
// server's entry in a client's config), whose text must stay valid;
// plainTargets are the others.
func (w *cacheWorld) configs() []string {
	return slices.DeleteFunc(w.targets(), func(p string) bool { return !isConfig(p) })
}

func (w *cacheWorld) plainTargets() []string { return slices.DeleteFunc(w.targets(), isConfig) }

func isConfig(p string) bool {
	return slices.Contains([]string{"config.toml", ".claude.json", ".mcp.json", "mcp.json"}, filepath.Base(p))
}

// toggleEntry adds the user's own server named name to the config file at
// path, or removes it when it is there; ours changes agentpack's own entry
// (fs) instead, when there.
func toggleEntry(path, name string, ours bool) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if filepath.Ext(path) == ".toml" {
		header := "\n[mcp_servers." + name + "]\ncommand = \"mine\"\n"
		if ours {
			data = bytes.Replace(data, []byte(`command = "npx"`), []byte(`command = "npx2"`), 1)
		} else if bytes.Contains(data, []byte(header)) {
			data = bytes.Replace(data, []byte(header), nil, 1)
		} else {
			data = append(data, header...)
		}
		return os.WriteFile(path, data, 0o644)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		return err
	}
	container := "mcpServers"
	if filepath.Base(filepath.Dir(path)) == ".vscode" {
		container = "servers"
	}
	servers, _ := doc[container].(map[string]any)
	if servers == nil {
		servers = map[string]any{}
		doc[container] = servers
	}
	switch {
	case ours && servers["fs"] != nil:
		servers["fs"].(map[string]any)["command"] = "npx2"
	case servers[name] != nil:
		delete(servers, name)
	default:
		servers[name] = map[string]any{"command": "mine"}
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(out, '\n'), 0o644)
}

// cacheOp is one kind of edit; do makes one and says what it did.
type cacheOp struct {
	name string
	do   func(rng *rand.Rand) string
}

func pick(rng *rand.Rand, paths []string) string {
	if len(paths) == 0 {
		return ""
	}
	return paths[rng.IntN(len(paths))]
}

func (w *cacheWorld) ops() []cacheOp {
	t := w.t
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// sameSize rewrites path with bytes of the same length (one more when
	// it has no body) and puts its times back: only its ctime (and, for a
	// new inode, its inode) tells.
	sameSize := func(rng *rand.Rand, path string, newInode bool) string {
		fi, err := os.Stat(path)
		must(err)
		data, err := os.ReadFile(path)
		must(err)
		// A byte of the body: one of a front matter could make the
		// module invalid, which is another test.
		body := 0
		if bytes.HasPrefix(data, []byte("---\n")) {
			if end := bytes.Index(data[4:], []byte("\n---\n")); end >= 0 {
				body = 4 + end + 5
			}
		}
		if body >= len(data) {
			data = append(data, 'x')
		} else {
			data[body+rng.IntN(len(data)-body)] = "abcdefghij"[rng.IntN(10)]
		}
		if newInode {
			tmp := path + ".new"
			must(os.WriteFile(tmp, data, fi.Mode().Perm()))
			must(os.Rename(tmp, path))
		} else {
			must(os.WriteFile(path, data, fi.Mode().Perm()))
		}
		must(os.Chtimes(path, fi.ModTime(), fi.ModTime()))
		return path
	}
	edit := func(list func() []string, newInode bool) func(*rand.Rand) string {
		return func(rng *rand.Rand) string {
			if p := pick(rng, list()); p != "" {
				return sameSize(rng, p, newInode)
			}
			return "nothing"
		}
	}
	appendLine := func(list func() []string) func(*rand.Rand) string {
		return func(rng *rand.Rand) string {
			p := pick(rng, list())
			if p == "" {
				return "nothing"
			}
			f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
			must(err)
			_, err = fmt.Fprintf(f, "line %d\n", rng.IntN(1000))
			must(err)
			must(f.Close())
			return p
		}
	}
	touch := func(list func() []string) func(*rand.Rand) string {
		return func(rng *rand.Rand) string {
			p := pick(rng, list())
			if p == "" {
				return "nothing"
			}
			at := time.Now().Add(-time.Duration(rng.IntN(3600)) * time.Second)
			must(os.Chtimes(p, at, at))
			return p
		}
	}
	chmod := func(list func() []string) func(*rand.Rand) string {
		return func(rng *rand.Rand) string {
			p := pick(rng, list())
			if p == "" {
				return "nothing"
			}
			fi, err := os.Stat(p)
			must(err)
			must(os.Chmod(p, fi.Mode().Perm()^0o111))
			return p
		}
	}
	remove := func(list func() []string) func(*rand.Rand) string {
		return func(rng *rand.Rand) string {
			p := pick(rng, list())
			if p == "" || filepath.Base(p) == "SKILL.md" && strings.HasPrefix(p, w.repo) {
				return "nothing" // a skill without its main file is another test
			}
			must(os.Remove(p))
			return p
		}
	}
	// addBeside adds a file in the folder of one of list's files.
	addBeside := func(list func() []string) func(*rand.Rand) string {
		return func(rng *rand.Rand) string {
			p := pick(rng, list())
			if p == "" {
				return "nothing"
			}
			w.n++
			np := filepath.Join(filepath.Dir(p), fmt.Sprintf("added-%d.md", w.n))
			must(os.WriteFile(np, []byte(fmt.Sprintf("added %d\n", w.n)), 0o644))
			return np
		}
	}
	skillFiles := func() []string { return w.files(filepath.Join(w.repo, "modules", "skills")) }
	manifest := filepath.Join(w.repo, "agentpack.yaml")
	// toggle makes flag one of the flags every command passes, or drops it.
	toggle := func(flag ...string) func(*rand.Rand) string {
		return func(*rand.Rand) string {
			if i := slices.Index(w.flags, flag[0]); i >= 0 {
				w.flags = slices.Delete(w.flags, i, i+len(flag))
				return "without " + flag[0]
			}
			w.flags = append(w.flags, flag...)
			return strings.Join(flag, " ")
		}
	}
	var switches []cacheOp
	if w.switches {
		switches = []cacheOp{
			{"other project", func(*rand.Rand) string {
				if w.proj == w.projects[0] {
					w.proj = w.projects[1]
				} else {
					w.proj = w.projects[0]
				}
				t.Chdir(w.proj)
				return w.proj
			}},
			{"profile", toggle("--profile", "work")},
			{"target", toggle("--target", "codex")},
		}
	}
	return append(switches, []cacheOp{
		{"source same size", edit(w.textSources, false)},
		{"source same size, new inode", edit(w.textSources, true)},
		{"source grows", appendLine(w.textSources)},
		{"source touched", touch(w.sources)},
		{"source mode", chmod(w.sources)},
		{"source removed", remove(skillFiles)},
		{"source added", addBeside(skillFiles)},
		{"target same size", edit(w.plainTargets, false)},
		{"target same size, new inode", edit(w.plainTargets, true)},
		{"target grows", appendLine(w.plainTargets)},
		{"target touched", touch(w.targets)},
		{"target mode", chmod(w.targets)},
		{"target removed", remove(w.targets)},
		{"target extra", addBeside(w.plainTargets)},
		{"overlay", func(rng *rand.Rand) string {
			// A replacement of one of the skill's files in its global or
			// project overlay folder, or the removal of one there.
			scope := [...]string{"global", "project"}[rng.IntN(2)]
			a := w.run("overlay", "path", "skill:release-notes", "--scope", scope)
			data, _ := a.Data.(map[string]any)
			dir, _ := data["overlay_dir"].(string)
			src := pick(rng, skillFiles())
			if dir == "" || src == "" {
				return "nothing"
			}
			rel, err := filepath.Rel(filepath.Join(w.repo, "modules", "skills", "release-notes"), src)
			must(err)
			if strings.HasPrefix(rel, "..") {
				return "nothing"
			}
			dst := filepath.Join(dir, rel)
			if _, err := os.Stat(dst); err == nil && rng.IntN(2) == 0 {
				must(os.Remove(dst))
				return "removed " + dst
			}
			old, err := os.ReadFile(src)
			must(err)
			must(os.MkdirAll(filepath.Dir(dst), 0o755))
			must(os.WriteFile(dst, append(old, fmt.Sprintf("overlaid %d\n", rng.IntN(1000))...), 0o644))
			return dst
		}},
		{"mcp module", func(rng *rand.Rand) string {
			p := filepath.Join(w.repo, "modules", "mcp", "fs.yaml")
			data, err := os.ReadFile(p)
			must(err)
			from, to := []byte(`"."]`), []byte(`"./src"]`)
			if !bytes.Contains(data, from) {
				from, to = to, from
			}
			must(os.WriteFile(p, bytes.Replace(data, from, to, 1), 0o644))
			return "its args"
		}},
		{"config entry", func(rng *rand.Rand) string {
			p := pick(rng, w.configs())
			if p == "" {
				return "nothing"
			}
			ours := rng.IntN(3) == 0
			must(toggleEntry(p, fmt.Sprintf("user%d", rng.IntN(2)), ours))
			if ours {
				return "agentpack's entry in " + p
			}
			return "the user's entry in " + p
		}},
		{"manifest", func(rng *rand.Rand) string {
			data, err := os.ReadFile(manifest)
			must(err)
			// The reviewer agent moves between the work and base profiles.
			from, to := "tags: [work]\n    source:\n      local_path:\n        path: modules/agents", "tags: [base]\n    source:\n      local_path:\n        path: modules/agents"
			if !bytes.Contains(data, []byte(from)) {
				from, to = to, from
			}
			must(os.WriteFile(manifest, bytes.Replace(data, []byte(from), []byte(to), 1), 0o644))
			return "agent:reviewer's tags"
		}},
		{"deploy", func(rng *rand.Rand) string {
			args := []string{"deploy", "--apply", "--yes"}
			if rng.IntN(2) == 0 {
				args = append(args, "--adopt")
			}
			w.run(args...)
			return strings.Join(args, " ")
		}},
		{"rollback", func(rng *rand.Rand) string {
			w.run("rollback", "--last", "--yes")
			return "rollback --last"
		}},
	}...)
}

// TestDeployThenRollbackRestoresUnderRandomEdits: after each of the random
// steps of TestCachesAgreeUnderRandomEdits (edited, removed and extra
// files, changed modes, overlays, other profiles, targets and projects), a
// deploy that may replace anything (--force --adopt) followed by
// `rollback --last` leaves every file of the projects and the home as it
// was before the deploy: the same bytes, mode and presence. Between the
// two, plan and status find everything in sync.
func TestDeployThenRollbackRestoresUnderRandomEdits(t *testing.T) {
	w := newCacheWorld(t)
	w.switches = true
	w.run("deploy", "--apply", "--yes")
	w.steps(func(step int, what string) {
		before := w.tree()
		d := w.run("deploy", "--apply", "--yes", "--force", "--adopt")
		if !d.OK {
			t.Fatalf("step %d (%s): deploy --force --adopt failed: %v (replay with AGENTPACK_TEST_SEED=%d)", step, what, d.Errors, w.seed)
		}
		if data, _ := d.Data.(map[string]any); data["snapshot_id"] == nil {
			return // nothing to do
		}
		// What the deploy left is in sync: nothing to plan, nothing in
		// status but files no module writes.
		if p := w.runWithoutCaches("plan"); !p.OK || len(p.Data.(map[string]any)["changes"].([]any)) != 0 {
			t.Fatalf("step %d (%s): a plan right after deploy --force --adopt says\n%s\n(replay with AGENTPACK_TEST_SEED=%d)", step, what, indent(p), w.seed)
		}
		st := w.runWithoutCaches("status")
		for _, item := range st.Data.(map[string]any)["drift"].([]any) {
			if kind := item.(map[string]any)["kind"]; kind != "extra" {
				t.Fatalf("step %d (%s): status right after deploy --force --adopt says\n%s\n(replay with AGENTPACK_TEST_SEED=%d)", step, what, indent(st), w.seed)
			}
		}
		if r := w.run("rollback", "--last", "--yes"); !r.OK {
			t.Fatalf("step %d (%s): rollback failed: %v (replay with AGENTPACK_TEST_SEED=%d)", step, what, r.Errors, w.seed)
		}
		if after := w.tree(); !reflect.DeepEqual(before, after) {
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
			t.Fatalf("step %d (%s): deploy and rollback changed\n%s\n(replay with AGENTPACK_TEST_SEED=%d)", step, what, strings.Join(diff, "\n"), w.seed)
		}
	})
}

// tree is every file and folder of the projects and the home but
// agentpack's own home: its mode and, for a file, its bytes.
func (w *cacheWorld) tree() map[string]string {
	out := map[string]string{}
	for _, dir := range w.projects[:] {
		w.walkTree(dir, out)
	}
	w.walkTree(w.home, out)
	return out
}

func (w *cacheWorld) walkTree(root string, out map[string]string) {
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && p == w.apHome {
			return filepath.SkipDir
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		v := fi.Mode().String()
		if fi.Mode().IsRegular() {
			data, _ := os.ReadFile(p)
			v += " " + string(data)
		}
		out[p] = v
		return nil
	})
}
