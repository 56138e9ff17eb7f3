package targets

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentpack/agentpack/engine/target"
	"github.com/agentpack/agentpack/internal/apperr"
)

func TestCursorRuleKey(t *testing.T) {
	cases := map[string]string{
		// sha256("instructions:base") starts d39861fff1 (checked with sha256sum).
		"instructions:base": "instructions_base--d39861fff1",
		"a/b c.d":           "a_b_c_d--",
		"é":                 "_--",
		"":                  "module--e3b0c44298",
	}
	for id, want := range cases {
		if got := CursorRuleKey(id); !strings.HasPrefix(got, want) || len(got) != len(strings.SplitN(got, "--", 2)[0])+12 {
			t.Errorf("CursorRuleKey(%q) = %q, want prefix %q and a 10-digit hash", id, got, want)
		}
	}
	long := strings.Repeat("x", 100)
	if got := CursorRuleKey(long); !strings.HasPrefix(got, strings.Repeat("x", 64)+"--") || len(got) != 64+2+10 {
		t.Errorf("long id key %q", got)
	}
	if CursorRuleKey(long+"a") == CursorRuleKey(long+"b") {
		t.Error("truncated keys collide")
	}
}

func TestCursorRuleDefaults(t *testing.T) {
	e := newTestEnv(t)
	out, _ := e.render(t, "cursor", target.ScopeProject, nil, "instructions:style")
	f := file(out, filepath.Join(e.proj, ".cursor", "rules", CursorRuleKey("instructions:style")+".mdc"))
	if f == nil {
		t.Fatal("no rule file")
	}
	// Same bytes as the original agentpack writes for a module without frontmatter.
	want := "---\ndescription: \"agentpack: instructions:style\"\nglobs: []\nalwaysApply: true\n---\n\n# Style\n\nWrite plain, direct sentences.\n"
	if string(f.Data) != want {
		t.Errorf("rule:\n%s\nwant:\n%s", f.Data, want)
	}
}

func TestProjectOnlyTargetsRejectUserScope(t *testing.T) {
	for _, name := range []string{"cursor", "vscode"} {
		a := adapter(t, name)
		for _, scope := range []target.Scope{target.ScopeUser, target.ScopeBoth} {
			err := a.Validate(target.Config{Scope: scope})
			var ae *apperr.Error
			if !errors.As(err, &ae) || ae.Code != apperr.ConfigInvalid || ae.Hint == "" {
				t.Errorf("%s scope %s: got %v, want E_CONFIG_INVALID with a hint", name, scope, err)
			}
		}
		for _, scope := range []target.Scope{"", target.ScopeProject} {
			if err := a.Validate(target.Config{Scope: scope}); err != nil {
				t.Errorf("%s scope %q: %v", name, scope, err)
			}
		}
	}
	for _, name := range []string{"codex", "claude_code"} {
		for _, scope := range []target.Scope{"", target.ScopeUser, target.ScopeProject, target.ScopeBoth} {
			if err := adapter(t, name).Validate(target.Config{Scope: scope}); err != nil {
				t.Errorf("%s scope %q: %v", name, scope, err)
			}
		}
	}
}

func TestVSCodePromptFileName(t *testing.T) {
	for in, want := range map[string]string{
		"summarize.md":        "summarize.prompt.md",
		"review.prompt.md":    "review.prompt.md",
		"Upper.PROMPT.md":     "Upper.PROMPT.md",
		"notes.MD":            "notes.prompt.md",
		"no-extension-prompt": "no-extension-prompt.prompt.md",
	} {
		if got := promptFileName(in); got != want {
			t.Errorf("promptFileName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDefaultScopes(t *testing.T) {
	for name, want := range map[string]target.Scope{"cursor": target.ScopeProject, "vscode": target.ScopeProject} {
		sd, ok := adapter(t, name).(target.ScopeDefaulter)
		if !ok || sd.DefaultScope() != want {
			t.Errorf("%s default scope: %v", name, ok)
		}
	}
	for _, name := range []string{"codex", "claude_code"} {
		if _, ok := adapter(t, name).(target.ScopeDefaulter); ok {
			t.Errorf("%s should use the engine's default (both)", name)
		}
	}
}
