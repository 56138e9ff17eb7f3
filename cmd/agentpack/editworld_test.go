package main

import (
	"bytes"
	"context"
	"encoding/json"
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
	"github.com/agentpack/agentpack/schemas/schematest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/pelletier/go-toml/v2"
)

// editWorld is a repo, two projects (proj is the working one) and a home
// that the random tests edit, and the CLI they run there.
type editWorld struct {
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
	// keepSnapshots leaves out the steps that prune old snapshots.
	keepSnapshots bool
}

func newEditWorld(t *testing.T) *editWorld {
	root := t.TempDir()
	w := &editWorld{t: t, repo: filepath.Join(root, "repo"), proj: filepath.Join(root, "proj"), home: filepath.Join(root, "home")}
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

// main runs agentpack with args against the repo and the world's flags,
// in process, and returns its exit code.
func (w *editWorld) main(stdout, stderr io.Writer, args ...string) int {
	return Main(slices.Concat([]string{"--repo", w.repo}, w.flags, args), strings.NewReader(""), stdout, stderr)
}

// run runs agentpack --json with args against the repo, in process; its
// envelope must be valid against the schemas, whatever state the steps
// left.
func (w *editWorld) run(args ...string) answer {
	w.t.Helper()
	var stdout, stderr bytes.Buffer
	w.main(&stdout, &stderr, append([]string{"--json"}, args...)...)
	var env any
	if err := json.Unmarshal(stdout.Bytes(), &env); err != nil {
		w.t.Fatalf("agentpack %q: %v\nstdout %s\nstderr %s", args, err, stdout.String(), stderr.String())
	}
	if err := schematest.Validate(stdout.Bytes()); err != nil {
		w.t.Fatalf("agentpack %q: invalid envelope: %v\n%s", args, err, stdout.String())
	}
	return answerOf(w.t, env)
}

// exitCode runs agentpack --json with args against the repo, in process,
// and returns its exit code.
func (w *editWorld) exitCode(args ...string) int {
	return w.main(io.Discard, io.Discard, append([]string{"--json"}, args...)...)
}

// runHuman runs agentpack with args against the repo as a person would
// (no --json): whatever state the steps left, it never fails inside.
func (w *editWorld) runHuman(args ...string) {
	w.t.Helper()
	var stdout, stderr bytes.Buffer
	w.main(&stdout, &stderr, args...)
	if out := stdout.String() + stderr.String(); strings.Contains(out, "internal error") || strings.Contains(out, "E_UNEXPECTED") {
		w.t.Fatalf("agentpack %q:\n%s", args, out)
	}
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
func (w *editWorld) cacheDirs() []string {
	return []string{filepath.Join(w.apHome, "cache"), filepath.Join(w.apHome, "state", "statcache")}
}

// runWithoutCaches is run with every cache moved aside, and put back after.
func (w *editWorld) runWithoutCaches(args ...string) answer {
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
func (w *editWorld) files(dirs ...string) []string {
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

func (w *editWorld) sources() []string { return w.files(filepath.Join(w.repo, "modules")) }

// textSources are the sources a byte may change in (not the MCP module's
// YAML, which the "mcp module" step edits).
func (w *editWorld) textSources() []string {
	return slices.DeleteFunc(w.sources(), func(p string) bool { return filepath.Ext(p) == ".yaml" })
}
func (w *editWorld) targets() []string { return w.files(w.projects[0], w.projects[1], w.home) }

// configs are the target files agentpack shares with the user (an MCP
// server's entry in a client's config), whose text must stay valid;
// plainTargets are the others.
func (w *editWorld) configs() []string {
	return slices.DeleteFunc(w.targets(), func(p string) bool { return !isConfig(p) })
}

func (w *editWorld) plainTargets() []string { return slices.DeleteFunc(w.targets(), isConfig) }

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
		// The table, wherever an edit of agentpack's left it (at the top of
		// the file, without the blank line before it).
		table := "[mcp_servers." + name + "]\ncommand = \"mine\"\n"
		switch {
		case ours:
			data = bytes.Replace(data, []byte(`command = "npx"`), []byte(`command = "npx2"`), 1)
		case bytes.Contains(data, []byte(table)):
			data = bytes.Replace(data, []byte(table), nil, 1)
		default:
			data = append(data, "\n"+table...)
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

// mcpSession starts one MCP server on the world's repo and project, as an
// IDE keeps it (write tools with allowWrite), and returns a client call.
func (w *editWorld) mcpSession(allowWrite bool) func(tool string, args map[string]any) answer {
	t := w.t
	app := &App{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard, Env: engine.EnvFromOS()}
	app.Globals.JSON = true
	srv, err := mcpserver.New(mcpserver.Options{Env: app.Env, NewEngine: app.newEngine, Defaults: engine.Request{Repo: w.repo},
		AllowWrite: allowWrite})
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
	t.Cleanup(func() { cs.Close(); ss.Wait(); srv.Close() })
	return func(tool string, args map[string]any) answer {
		t.Helper()
		if args == nil {
			args = map[string]any{}
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			t.Fatalf("call %s: %v", tool, err)
		}
		doc, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		if err := schematest.Validate(doc); err != nil {
			t.Fatalf("call %s: invalid envelope: %v\n%s", tool, err, doc)
		}
		return answerOf(t, res.StructuredContent)
	}
}

// steps makes the test's random edits, calling check after each.
func (w *editWorld) steps(check func(step int, what string)) {
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
func (w *editWorld) agree(step int, what, cmd string, got answer) {
	w.t.Helper()
	if cold := w.runWithoutCaches(cmd); !reflect.DeepEqual(got, cold) {
		w.t.Fatalf("step %d (%s): %s with caches says\n%s\nwithout them\n%s\n(replay with AGENTPACK_TEST_SEED=%d)",
			step, what, cmd, indent(got), indent(cold), w.seed)
	}
}

// tree is every file and folder of the projects and the home, but
// agentpack's own home unless withOwn (and its caches, which any command
// may fill, in any case): its mode and, for a file, its bytes.
func (w *editWorld) tree(withOwn bool) map[string]string {
	out := map[string]string{}
	for _, dir := range w.projects[:] {
		w.walkTree(dir, withOwn, out)
	}
	w.walkTree(w.home, withOwn, out)
	return out
}

func (w *editWorld) walkTree(root string, withOwn bool, out map[string]string) {
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && (p == w.apHome && !withOwn || slices.Contains(w.cacheDirs(), p)) {
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

// usersConfig is what the config files agentpack shares with the user say
// besides agentpack's own server entry (fs): path → that document as
// canonical JSON. A deploy or rollback must never change it.
func (w *editWorld) usersConfig() map[string]string {
	out := map[string]string{}
	for _, path := range w.configs() {
		data, err := os.ReadFile(path)
		w.must(err)
		var doc map[string]any
		container := "mcpServers"
		switch {
		case filepath.Ext(path) == ".toml":
			err, container = toml.Unmarshal(data, &doc), "mcp_servers"
		case filepath.Base(filepath.Dir(path)) == ".vscode":
			err, container = json.Unmarshal(data, &doc), "servers"
		default:
			err = json.Unmarshal(data, &doc)
		}
		w.must(err)
		if servers, ok := doc[container].(map[string]any); ok {
			delete(servers, "fs")
			if len(servers) == 0 {
				delete(doc, container)
			}
		}
		canonical, err := json.Marshal(doc)
		w.must(err)
		out[path] = string(canonical)
	}
	return out
}
