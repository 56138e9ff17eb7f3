package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/engine/manifest"
	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/agentpack/agentpack/targets"
)

// loadManifest reads repo/agentpack.yaml from disk, as the engine does.
func loadManifest(repo string) (*manifest.Manifest, error) {
	return manifest.Load(fsys.NewRealSystem(fsys.RealSystemOptions{}), fsys.AbsPath(repo), targets.NewSet().Names())
}

// testEnv returns an Env whose home, state and project live in temp dirs.
func testEnv(t testing.TB) engine.Env {
	t.Helper()
	dir := t.TempDir()
	env := engine.Env{Home: filepath.Join(dir, "home"), AgentpackHome: filepath.Join(dir, "home", ".agentpack"), Cwd: filepath.Join(dir, "proj")}
	for _, d := range []string{env.Home, filepath.Join(env.Cwd, ".git")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return env
}

// writeRepo writes files (path → content) under a new repo dir.
func writeRepo(t testing.TB, files map[string]string) string {
	t.Helper()
	repo := filepath.Join(t.TempDir(), "repo")
	for p, c := range files {
		full := filepath.Join(repo, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return repo
}

const codexOnlyManifest = `version: 1
profiles:
  default: {include_tags: [base]}
targets:
  codex: {scope: project}
modules:
  - id: instructions:base
    type: instructions
    tags: [base]
    source: {local_path: {path: modules/base}}
  - id: skill:s
    type: skill
    tags: [base]
    source: {local_path: {path: modules/s}}
`

func codexRepo(t testing.TB) string {
	return writeRepo(t, map[string]string{
		"agentpack.yaml":         codexOnlyManifest,
		"modules/base/AGENTS.md": "# base\n",
		"modules/s/SKILL.md":     "---\nname: s\ndescription: d\n---\nbody\n",
		"modules/s/extra.txt":    "x\n",
	})
}

func mustWrite(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustRead(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// deployedCodexRepo deploys codexRepo into a fresh testEnv: the starting
// point of most apply, rollback and status tests.
func deployedCodexRepo(t testing.TB) (engine.Env, *engine.Engine, engine.Request, string) {
	t.Helper()
	env := testEnv(t)
	repo := codexRepo(t)
	e := engine.New(env, targets.NewSet())
	req := engine.Request{Repo: repo}
	if _, _, err := e.Deploy(context.Background(), req, true, engine.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	return env, e, req, repo
}

// diffShown is the text of every diff e's Diff of req shows.
func diffShown(t testing.TB, e *engine.Engine, req engine.Request) string {
	t.Helper()
	_, d, err := e.Diff(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var shown strings.Builder
	for _, c := range d.Changes {
		shown.WriteString(c.Unified.String())
	}
	return shown.String()
}
