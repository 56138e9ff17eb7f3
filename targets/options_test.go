package targets

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentpack/agentpack/engine/module"
	"github.com/agentpack/agentpack/engine/target"
	"github.com/agentpack/agentpack/internal/apperr"
)

var specs = []*targetSpec{codexSpec, claudeCodeSpec, cursorSpec, vscodeSpec}

func widestScope(s *targetSpec) target.Scope {
	if s.projectOnly {
		return target.ScopeProject
	}
	return target.ScopeBoth
}

// defaultPath is where output o lands without path options.
func (e *testEnv) defaultPath(s *targetSpec, o output) string {
	base := e.proj
	if o.user {
		base = map[string]string{"codex": e.codexHome, "claude_code": filepath.Join(e.home, ".claude")}[s.name]
	}
	return filepath.Join(base, filepath.FromSlash(o.def))
}

func filesWithin(out *target.Output, p string) []string {
	var got []string
	for _, f := range out.Files {
		if within(f.Path.String(), p) {
			got = append(got, f.Path.String())
		}
	}
	return got
}

func TestWriteOptionsTurnOutputsOff(t *testing.T) {
	e := newTestEnv(t)
	for _, s := range specs {
		base, _ := e.render(t, s.name, widestScope(s), nil)
		for _, o := range s.outputs {
			if o.kind == mcpKind {
				continue // key-level files: mcp_test.go
			}
			p := e.defaultPath(s, o)
			root := p
			if o.file {
				root = filepath.Dir(p)
			}
			if len(filesWithin(base, p)) == 0 || !hasRoot(base, root, !o.file) {
				t.Fatalf("%s %s: baseline writes nothing to %s", s.name, o.write, p)
			}
			keys := []string{o.write}
			if o.alias != "" {
				keys = append(keys, o.alias)
			}
			for _, key := range keys {
				for _, off := range []any{false, "false"} {
					out, warnings := e.render(t, s.name, widestScope(s), map[string]any{key: off})
					if got := filesWithin(out, p); len(got) != 0 {
						t.Errorf("%s %s=%v still writes %v", s.name, key, off, got)
					}
					if hasRoot(out, root, !o.file) {
						t.Errorf("%s %s=%v still returns root %s", s.name, key, off, root)
					}
					if want := len(base.Files) - len(filesWithin(base, p)); len(out.Files) != want {
						t.Errorf("%s %s=%v left %d files, want %d", s.name, key, off, len(out.Files), want)
					}
					if len(warnings) > 0 && strings.Contains(strings.Join(warnings, ""), "unknown option") {
						t.Errorf("%s %s: %q", s.name, key, warnings)
					}
				}
			}
		}
	}
}

func TestPathOptionsMoveOutputs(t *testing.T) {
	e := newTestEnv(t)
	for _, s := range specs {
		base, _ := e.render(t, s.name, widestScope(s), nil)
		for _, o := range s.outputs {
			if o.kind == mcpKind {
				continue // key-level files: mcp_test.go
			}
			old := e.defaultPath(s, o)
			moved := "moved/" + strings.ReplaceAll(o.path, "_", "-")
			out, _ := e.render(t, s.name, widestScope(s), map[string]any{o.path: moved})
			baseDir := e.proj
			if o.user {
				baseDir = strings.TrimSuffix(old, string(filepath.Separator)+filepath.FromSlash(o.def))
			}
			want := filepath.Join(baseDir, filepath.FromSlash(moved))
			if got := filesWithin(out, old); len(got) != 0 && !o.file {
				t.Errorf("%s %s: files left at %s: %v", s.name, o.path, old, got)
			}
			if o.file && file(out, old) != nil {
				t.Errorf("%s %s: file left at %s", s.name, o.path, old)
			}
			if n, m := len(filesWithin(out, want)), len(filesWithin(base, old)); n != m {
				t.Errorf("%s %s: %d files under %s, want %d", s.name, o.path, n, want, m)
			}
			root := want
			if o.file {
				root = filepath.Dir(want)
			}
			if !hasRoot(out, root, !o.file) {
				t.Errorf("%s %s: no root %s in %v", s.name, o.path, root, out.Roots)
			}
		}
	}
	// Tilde and absolute paths are taken as they are.
	abs := filepath.Join(t.TempDir(), "rules")
	out, _ := e.render(t, "cursor", target.ScopeProject, map[string]any{"rules_dir": abs, "skills_dir": "~/cursor-skills"})
	if len(filesWithin(out, abs)) != 3 || len(filesWithin(out, filepath.Join(e.home, "cursor-skills"))) != 3 {
		t.Errorf("absolute/tilde paths not honoured: %v", out.Files)
	}
}

func TestRootsWithoutModules(t *testing.T) {
	e := newTestEnv(t)
	for _, s := range specs {
		a := adapter(t, s.name)
		out, err := a.render(e.rc(s.name, widestScope(s), nil), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Files) != 0 || len(out.Roots) == 0 {
			t.Errorf("%s: files %v roots %v", s.name, out.Files, out.Roots)
		}
		full, _ := e.render(t, s.name, widestScope(s), nil)
		if len(full.Roots) != len(out.Roots) {
			t.Errorf("%s: roots differ without modules: %v vs %v", s.name, out.Roots, full.Roots)
		}
	}
	// Only the roots of the active scope.
	out, _ := e.render(t, "claude_code", target.ScopeUser, nil)
	for _, r := range out.Roots {
		if within(r.Path.String(), e.proj) {
			t.Errorf("user scope returned project root %s", r.Path)
		}
	}
}

func TestUnknownOptionWarns(t *testing.T) {
	e := newTestEnv(t)
	_, warnings := e.render(t, "vscode", target.ScopeProject, map[string]any{"write_chatmodes": true, "write_prompts": true}, "prompt:summarize")
	if len(warnings) != 1 || !containsWarning(warnings, `"write_chatmodes"`, "write_prompts") {
		t.Errorf("warnings %q", warnings)
	}
}

func TestValidateOptionTypes(t *testing.T) {
	bad := []struct {
		target string
		opts   map[string]any
	}{
		{"cursor", map[string]any{"write_rules": "maybe"}},
		{"codex", map[string]any{"write_user_skills": 1}},
		{"codex", map[string]any{"codex_home": ""}},
		{"claude_code", map[string]any{"repo_skills_dir": 3}},
		{"vscode", map[string]any{"prompts_dir": []any{"a"}}},
	}
	for _, c := range bad {
		err := adapter(t, c.target).Validate(target.Config{Options: c.opts})
		var ae *apperr.Error
		if !errors.As(err, &ae) || ae.Code != apperr.ConfigInvalid {
			t.Errorf("%s %v: got %v, want E_CONFIG_INVALID", c.target, c.opts, err)
		}
	}
	good := map[string]any{"write_rules": "no", "rules_dir": "x", "someday_option": 42}
	if err := adapter(t, "cursor").Validate(target.Config{Options: good}); err != nil {
		t.Errorf("valid options refused: %v", err)
	}
}

func TestDroppedFrontmatterWarnsOnce(t *testing.T) {
	e := newTestEnv(t)
	out, warnings := e.render(t, "claude_code", target.ScopeBoth, nil, "agent:reviewer", "instructions:base")
	want := []string{
		`module agent:reviewer: frontmatter key "color" dropped (claude_code agents cannot use it)`,
		`module instructions:base: frontmatter key "owner" dropped (claude_code instructions cannot use it)`,
	}
	if strings.Join(warnings, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(warnings, "\n"), strings.Join(want, "\n"))
	}
	agent := string(file(out, filepath.Join(e.proj, ".claude", "agents", "reviewer.md")).Data)
	if strings.Contains(agent, "color") || !strings.Contains(agent, "tools: Read, Grep, Glob") {
		t.Errorf("agent:\n%s", agent)
	}
	// Nothing to drop: the source bytes are written unchanged.
	_, warnings = e.render(t, "claude_code", target.ScopeProject, nil, "command:ship", "skill:review", "prompt:summarize")
	if len(warnings) != 0 {
		t.Errorf("unexpected warnings %q", warnings)
	}
}

func TestPublicRenderAndRegister(t *testing.T) {
	e := newTestEnv(t)
	for _, a := range Builtin() {
		scope := target.ScopeProject
		out, err := a.Render(e.rc(a.Name(), scope, nil), e.mods(a))
		if err != nil {
			t.Fatalf("%s: %v", a.Name(), err)
		}
		ref, _ := e.render(t, a.Name(), scope, nil)
		if e.listing(t, out, nil) != e.listing(t, ref, nil) {
			t.Errorf("%s: Render and render differ", a.Name())
		}
		if !a.Supports(module.TypeMCP) {
			t.Errorf("%s does not support mcp modules", a.Name())
		}
	}
	set := NewSet()
	for _, name := range []string{"claude_code", "codex", "cursor", "vscode"} {
		if _, err := set.Lookup(name); err != nil {
			t.Errorf("%s not in the built-in set: %v", name, err)
		}
	}
}
