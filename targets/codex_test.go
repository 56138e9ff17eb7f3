package targets

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentpack/agentpack/engine/module"
	"github.com/agentpack/agentpack/engine/target"
	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/pelletier/go-toml/v2"
)

func TestCodexHomePrecedence(t *testing.T) {
	e := newTestEnv(t)
	optHome := filepath.Join(t.TempDir(), "opt-codex")
	cases := []struct {
		name    string
		opts    map[string]any
		envHome string
		want    string
	}{
		{"option beats env", map[string]any{"codex_home": optHome}, e.codexHome, optHome},
		{"option with tilde", map[string]any{"codex_home": "~/custom-codex"}, e.codexHome, filepath.Join(e.home, "custom-codex")},
		{"env beats default", nil, e.codexHome, e.codexHome},
		{"default ~/.codex", nil, "", filepath.Join(e.home, ".codex")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := adapter(t, "codex")
			rc := e.rc("codex", target.ScopeUser, c.opts)
			rc.CodexHome = c.envHome
			out, err := a.render(rc, e.mods(a, "prompt:summarize"), nil)
			if err != nil {
				t.Fatal(err)
			}
			if file(out, filepath.Join(c.want, "prompts", "summarize.md")) == nil {
				t.Errorf("prompt not under %s: %v", c.want, out.Files)
			}
			if !hasRoot(out, c.want, false) || !hasRoot(out, filepath.Join(c.want, "skills"), true) {
				t.Errorf("roots %v, want %s", out.Roots, c.want)
			}
		})
	}
}

func TestCodexAgentTOML(t *testing.T) {
	e := newTestEnv(t)
	out, warnings := e.render(t, "codex", target.ScopeProject, nil, "agent:reviewer")
	f := file(out, filepath.Join(e.proj, ".codex", "agents", "reviewer.toml"))
	if f == nil {
		t.Fatal("no agent toml")
	}
	var got map[string]any
	if err := toml.Unmarshal(f.Data, &got); err != nil {
		t.Fatalf("toml does not parse: %v\n%s", err, f.Data)
	}
	want := map[string]any{
		"name":                   "reviewer",
		"description":            "Reviews code for correctness.",
		"developer_instructions": "You are a careful code reviewer. Point out bugs first, style last.\n",
	}
	if len(got) != len(want) {
		t.Errorf("keys %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	// "sonnet" means nothing to Codex: no model, and a warning says so.
	if !containsWarning(warnings, "agent:reviewer", `"sonnet"`) {
		t.Errorf("no model warning in %q", warnings)
	}

	// A model Codex can use is kept; tricky text survives the round trip.
	dir := t.TempDir()
	src := filepath.Join(dir, "fast.md")
	body := "Use \"\"\" quotes, a \\ backslash and 'single' ones.\n\nLine two.\n"
	if err := os.WriteFile(src, []byte("---\nname: fast\ndescription: Quick agent\nmodel: gpt-5-codex\n---\n"+body), 0o644); err != nil {
		t.Fatal(err)
	}
	lm, err := module.LoadModule(fsys.NewRealSystem(fsys.RealSystemOptions{}), &module.Module{ID: "agent:fast", Type: module.TypeAgent}, src)
	if err != nil {
		t.Fatal(err)
	}
	a := adapter(t, "codex")
	out, err = a.render(e.rc("codex", target.ScopeProject, nil), []*module.LoadedModule{lm}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var agent codexAgentFile
	if err := toml.Unmarshal(file(out, filepath.Join(e.proj, ".codex", "agents", "fast.toml")).Data, &agent); err != nil {
		t.Fatal(err)
	}
	if agent.Model != "gpt-5-codex" || agent.DeveloperInstructions != body || agent.Name != "fast" {
		t.Errorf("agent = %+v", agent)
	}
}

func TestCodexPromptsAreUserOnly(t *testing.T) {
	e := newTestEnv(t)
	out, _ := e.render(t, "codex", target.ScopeProject, nil, "prompt:summarize")
	if len(out.Files) != 0 {
		t.Errorf("project scope wrote prompts: %v", out.Files)
	}
}

func hasRoot(out *target.Output, p string, scan bool) bool {
	for _, r := range out.Roots {
		if r.Path.String() == p && r.ScanExtras == scan {
			return true
		}
	}
	return false
}

func containsWarning(warnings []string, parts ...string) bool {
	for _, w := range warnings {
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(w, p)
		}
		if ok {
			return true
		}
	}
	return false
}
