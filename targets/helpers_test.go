package targets

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/agentpack/agentpack/engine/module"
	"github.com/agentpack/agentpack/engine/target"
	"github.com/agentpack/agentpack/internal/fsys"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// fixtureModules maps module ids to their folders or files in testdata/modules.
var fixtureModules = []struct {
	id   string
	typ  module.Type
	path string
}{
	{"agent:reviewer", module.TypeAgent, "agents/reviewer.md"},
	{"command:ship", module.TypeCommand, "commands/ship.md"},
	{"instructions:base", module.TypeInstructions, "instructions/base"},
	{"instructions:style", module.TypeInstructions, "instructions/style"},
	{"instructions:typescript", module.TypeInstructions, "instructions/typescript"},
	{"prompt:summarize", module.TypePrompt, "prompts/summarize.md"},
	{"skill:review", module.TypeSkill, "skills/review"},
}

// testEnv is one isolated world: home, CODEX_HOME and project in temp dirs.
type testEnv struct {
	home, codexHome, proj string
	modules               map[string]*module.LoadedModule
}

func newTestEnv(t *testing.T) *testEnv {
	t.Helper()
	tmp := t.TempDir()
	e := &testEnv{
		home:      filepath.Join(tmp, "home"),
		codexHome: filepath.Join(tmp, "codexhome"),
		proj:      filepath.Join(tmp, "proj"),
		modules:   map[string]*module.LoadedModule{},
	}
	for _, d := range []string{e.home, e.codexHome, e.proj} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Copy the fixtures so modes are exact whatever the checkout's umask.
	src := filepath.Join(tmp, "modules")
	if err := os.CopyFS(src, os.DirFS("testdata/modules")); err != nil {
		t.Fatal(err)
	}
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		mode := os.FileMode(0o644)
		if strings.HasSuffix(p, ".sh") {
			mode = 0o755
		}
		return os.Chmod(p, mode)
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fixtureModules {
		lm, err := module.LoadModule(fsys.NewRealSystem(fsys.RealSystemOptions{}), &module.Module{ID: f.id, Type: f.typ}, filepath.Join(src, f.path))
		if err != nil {
			t.Fatalf("load %s: %v", f.id, err)
		}
		e.modules[f.id] = lm
	}
	return e
}

// mods returns the named fixture modules (all when none are named), id order.
func (e *testEnv) mods(t target.Adapter, ids ...string) []*module.LoadedModule {
	if len(ids) == 0 {
		for id := range e.modules {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	var out []*module.LoadedModule
	for _, id := range ids {
		if lm := e.modules[id]; t.Supports(lm.Type) {
			out = append(out, lm)
		}
	}
	return out
}

func (e *testEnv) rc(name string, scope target.Scope, opts map[string]any) *target.RenderContext {
	return &target.RenderContext{
		Target:      name,
		Config:      target.Config{Mode: "files", Scope: scope, Options: opts},
		Scope:       scope,
		Home:        fsys.AbsPath(e.home),
		CodexHome:   e.codexHome,
		ProjectRoot: fsys.AbsPath(e.proj),
		FS:          fsys.NewRealSystem(fsys.RealSystemOptions{}),
	}
}

// warningRenderer is the unexported entry point every adapter has, so tests can
// collect warnings (RenderContext keeps its warning sink private).
type warningRenderer interface {
	target.Adapter
	render(rc *target.RenderContext, modules []*module.LoadedModule, warn warnFunc) (*target.Output, error)
}

func adapter(t *testing.T, name string) warningRenderer {
	t.Helper()
	for _, a := range Builtin() {
		if a.Name() == name {
			return a.(warningRenderer)
		}
	}
	t.Fatalf("no adapter %s", name)
	return nil
}

// render runs an adapter with the fixture modules it supports.
func (e *testEnv) render(t *testing.T, name string, scope target.Scope, opts map[string]any, ids ...string) (*target.Output, []string) {
	t.Helper()
	a := adapter(t, name)
	rc := e.rc(name, scope, opts)
	if err := a.Validate(rc.Config); err != nil {
		t.Fatalf("validate: %v", err)
	}
	var warnings []string
	out, err := a.render(rc, e.mods(a, ids...), func(format string, args ...any) {
		warnings = append(warnings, fmt.Sprintf(format, args...))
	})
	if err != nil {
		t.Fatalf("render %s: %v", name, err)
	}
	return out, warnings
}

// file returns the desired file at p, or nil.
func file(out *target.Output, p string) *target.DesiredFile {
	for i := range out.Files {
		if out.Files[i].Path.String() == p {
			return &out.Files[i]
		}
	}
	return nil
}

// within reports whether p lies inside (or is) dir.
func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// listing renders an output as stable text: roots, then each file under its
// deepest root with mode, hash, module ids and content, then warnings.
func (e *testEnv) listing(t *testing.T, out *target.Output, warnings []string) string {
	t.Helper()
	norm := strings.NewReplacer(e.codexHome, "$CODEX_HOME", e.home, "$HOME", e.proj, "$PROJECT").Replace
	var b strings.Builder
	b.WriteString("# roots\n")
	for _, r := range out.Roots {
		fmt.Fprintf(&b, "%s scan_extras=%v\n", norm(r.Path.String()), r.ScanExtras)
	}
	b.WriteString("\n# files\n")
	for _, f := range out.Files {
		root := ""
		for _, r := range out.Roots {
			if within(f.Path.String(), r.Path.String()) && len(r.Path) > len(root) {
				root = r.Path.String()
			}
		}
		if root == "" {
			t.Errorf("file %s lies under no root", f.Path)
		}
		rel, _ := filepath.Rel(root, f.Path.String())
		sum := sha256.Sum256(f.Data)
		fmt.Fprintf(&b, "== [%s] %s mode=%04o sha256=%s modules=%s\n", norm(root), filepath.ToSlash(rel),
			f.Mode, hex.EncodeToString(sum[:])[:16], strings.Join(f.ModuleIDs, ","))
		for _, line := range strings.SplitAfter(string(f.Data), "\n") {
			if line != "" {
				b.WriteString("| " + strings.TrimSuffix(line, "\n") + "\n")
			}
		}
	}
	b.WriteString("\n# warnings\n")
	for _, w := range warnings {
		b.WriteString(norm(w) + "\n")
	}
	return b.String()
}

// golden compares got with testdata/golden/<name>.txt (rewritten by -update).
func golden(t *testing.T, name, got string) {
	t.Helper()
	p := filepath.Join("testdata", "golden", name+".txt")
	if *update {
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run go test ./targets -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file (go test ./targets -update rewrites it):\n--- got\n%s\n--- want\n%s", p, got, want)
	}
}
