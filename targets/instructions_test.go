package targets

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentpack/agentpack/engine/target"
)

func TestInstructionsMarkersInIDOrder(t *testing.T) {
	e := newTestEnv(t)
	// The engine passes modules in id order; the file follows that order.
	out, _ := e.render(t, "claude_code", target.ScopeProject, nil, "instructions:style", "instructions:base")
	f := file(out, filepath.Join(e.proj, "CLAUDE.md"))
	if f == nil {
		t.Fatal("no CLAUDE.md")
	}
	want := "<!-- agentpack:module=instructions:base -->\n# Base rules\n\n- Run the tests before you push.\n- Keep functions short.\n<!-- /agentpack -->\n" +
		"\n" +
		"<!-- agentpack:module=instructions:style -->\n# Style\n\nWrite plain, direct sentences.\n<!-- /agentpack -->\n"
	if string(f.Data) != want {
		t.Errorf("CLAUDE.md:\n%s\nwant:\n%s", f.Data, want)
	}
	if got := strings.Join(f.ModuleIDs, ","); got != "instructions:base,instructions:style" {
		t.Errorf("module ids %s", got)
	}
}

func TestInstructionsOneModuleRaw(t *testing.T) {
	e := newTestEnv(t)
	out, _ := e.render(t, "codex", target.ScopeBoth, nil, "instructions:style")
	src := e.modules["instructions:style"].Main.Data
	for _, p := range []string{filepath.Join(e.codexHome, "AGENTS.md"), filepath.Join(e.proj, "AGENTS.md")} {
		f := file(out, p)
		if f == nil || string(f.Data) != string(src) {
			t.Errorf("%s: want the source AGENTS.md byte for byte, got %+v", p, f)
		}
	}
	// With frontmatter, the body alone is written (metadata never leaks).
	out, _ = e.render(t, "codex", target.ScopeProject, nil, "instructions:base")
	want := "# Base rules\n\n- Run the tests before you push.\n- Keep functions short.\n"
	if f := file(out, filepath.Join(e.proj, "AGENTS.md")); f == nil || string(f.Data) != want {
		t.Errorf("AGENTS.md = %q, want %q", f.Data, want)
	}
}

func TestInstructionsPreserveTextOutsideMarkers(t *testing.T) {
	e := newTestEnv(t)
	p := filepath.Join(e.proj, "CLAUDE.md")
	existing := "# My own notes\n\nKeep this.\n\n" +
		"<!-- agentpack:module=instructions:old -->\nstale text\n<!-- /agentpack -->\n" +
		"\n## Footer\nAlso mine.\n"
	if err := os.WriteFile(p, []byte(existing), 0o644); err != nil {
		t.Fatal(err)
	}
	// One module alone still uses markers, because the file already has them.
	out, _ := e.render(t, "claude_code", target.ScopeProject, nil, "instructions:style")
	want := "# My own notes\n\nKeep this.\n\n" +
		"<!-- agentpack:module=instructions:style -->\n# Style\n\nWrite plain, direct sentences.\n<!-- /agentpack -->\n" +
		"\n## Footer\nAlso mine.\n"
	f := file(out, p)
	if f == nil || string(f.Data) != want {
		t.Fatalf("CLAUDE.md:\n%s\nwant:\n%s", f.Data, want)
	}
	// Rendering again over the written file changes nothing.
	if err := os.WriteFile(p, f.Data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, _ = e.render(t, "claude_code", target.ScopeProject, nil, "instructions:style")
	if again := file(out, p); string(again.Data) != want {
		t.Errorf("second render differs:\n%s", again.Data)
	}
	// Two modules replace everything between the first and the last marker.
	out, _ = e.render(t, "claude_code", target.ScopeProject, nil, "instructions:base", "instructions:style")
	got := string(file(out, p).Data)
	if !strings.HasPrefix(got, "# My own notes\n\nKeep this.\n\n<!-- agentpack:module=instructions:base -->\n") ||
		!strings.HasSuffix(got, "<!-- /agentpack -->\n\n## Footer\nAlso mine.\n") ||
		strings.Count(got, markerEnd) != 2 {
		t.Errorf("two modules:\n%s", got)
	}
}

func TestOutsideMarkers(t *testing.T) {
	cases := []struct {
		name, text, prefix, suffix string
		ok                         bool
	}{
		{"none", "plain\n", "", "", false},
		{"unterminated", "a\n<!-- agentpack:module=x -->\nb\n", "", "", false},
		{"end at eof", "a\n<!-- agentpack:module=x -->\nb\n<!-- /agentpack -->", "a\n", "", true},
		{"two blocks", "<!-- agentpack:module=x -->\n<!-- /agentpack -->\nmid\n<!-- agentpack:module=y -->\n<!-- /agentpack -->\ntail\n", "", "tail\n", true},
		{"inline mention ignored", "see <!-- agentpack:module=x --> here\n", "", "", false},
	}
	for _, c := range cases {
		prefix, suffix, ok := outsideMarkers(c.text)
		if prefix != c.prefix || suffix != c.suffix || ok != c.ok {
			t.Errorf("%s: got (%q, %q, %v)", c.name, prefix, suffix, ok)
		}
	}
}

func TestInstructionMetadataNeverWarned(t *testing.T) {
	e := newTestEnv(t)
	// instructions:typescript has only description and applyTo.
	for _, name := range []string{"codex", "claude_code", "cursor", "vscode"} {
		scope := target.ScopeProject
		_, warnings := e.render(t, name, scope, nil, "instructions:typescript")
		if len(warnings) != 0 {
			t.Errorf("%s: unexpected warnings %q", name, warnings)
		}
	}
}
