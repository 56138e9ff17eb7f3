package manifest_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agentpack/agentpack/engine/manifest"
	"github.com/agentpack/agentpack/internal/apperr"
)

var known = []string{"codex", "claude_code"}

// withModules is a valid manifest whose modules list is mods; the first
// module's `- id:` line is line 6.
func withModules(mods string) []byte {
	return []byte("version: 1\nprofiles:\n  default: {include_tags: [base]}\ntargets: {codex: {}}\nmodules:\n" + mods)
}

// wantConfigErr fails the test unless err is E_CONFIG_INVALID.
func wantConfigErr(t *testing.T, err error) *apperr.Error {
	t.Helper()
	if err == nil {
		t.Fatal("want E_CONFIG_INVALID, got no error")
	}
	ae := apperr.As(err)
	if ae.Code != apperr.ConfigInvalid {
		t.Fatalf("want E_CONFIG_INVALID, got %v", err)
	}
	return ae
}

func moduleYAML(id, typ string) string {
	return fmt.Sprintf("  - id: %q\n    type: %s\n    tags: [base]\n    source: {local_path: {path: modules/x}}\n", id, typ)
}

// TestModuleIDRefused: ids that are not `<type>:<name>` with the module's
// type and a portable name were accepted until deploy (or deployed to a
// folder other than their name); they are E_CONFIG_INVALID naming the id,
// its key and its line.
func TestModuleIDRefused(t *testing.T) {
	for _, tc := range []struct{ id, typ, why string }{
		{"skill:", "skill", "empty name"},
		{"skill:.", "skill", "starting with '.'"},
		{"skill:..", "skill", "starting with '.'"},
		{":x", "skill", "empty type"},
		{"skill:.hidden", "skill", "starting with '.'"},
		{"skill:hidden.", "skill", "ending with '.'"},
		{"skill:a..b", "skill", `".."`},
		{"skill:café", "skill", "'é'"},
		{"skill:日本", "skill", "'日'"},
		{"skill:a b", "skill", "' '"},
		{"skill:a/b", "skill", "'/'"},
		{`skill:a\b`, "skill", `'\\'`},
		{"skill:a:b", "skill", "':'"},
		{"skill:" + strings.Repeat("n", 300), "skill", "300 bytes"},
		{"review", "skill", "no `<type>:` prefix"},
		{"prompt:review", "skill", `the module's type is "skill" (use "skill:review")`},
	} {
		t.Run(tc.id, func(t *testing.T) {
			data := withModules(moduleYAML("instructions:base", "instructions") + moduleYAML(tc.id, tc.typ))
			_, err := manifest.Parse(data, known)
			ae := wantConfigErr(t, err)
			if !strings.Contains(ae.Message, fmt.Sprintf("%q", tc.id)) || !strings.Contains(ae.Message, tc.why) {
				t.Fatalf("id %q: message %q should name the id and say %s", tc.id, ae.Message, tc.why)
			}
			if ae.Details["line"] != 10 || ae.Details["key"] != "modules[1].id" || ae.Details["module_id"] != tc.id {
				t.Fatalf("id %q: details %v, want line 10, key modules[1].id", tc.id, ae.Details)
			}
			if !strings.Contains(ae.Hint, "<type>:<name>") {
				t.Fatalf("id %q: hint %q should give the rule", tc.id, ae.Hint)
			}
		})
	}
}

// TestModuleIDAccepted: the ids of the spec and the longest portable name
// load.
func TestModuleIDAccepted(t *testing.T) {
	mods := moduleYAML("instructions:base", "instructions") + moduleYAML("skill:release-notes", "skill") +
		moduleYAML("skill:a.b_C-9", "skill") + moduleYAML("prompt:review", "prompt") + moduleYAML("skill:review", "skill") +
		moduleYAML("mcp:"+strings.Repeat("n", 239), "mcp")
	if _, err := manifest.Parse(withModules(mods), known); err != nil {
		t.Fatal(err)
	}
}

// TestModuleIDCaseCollision: two ids of one type whose names differ in case
// alone deploy to one folder on macOS and Windows; ids of two types may
// share a name.
func TestModuleIDCaseCollision(t *testing.T) {
	_, err := manifest.Parse(withModules(moduleYAML("skill:review", "skill")+moduleYAML("prompt:review", "prompt")+moduleYAML("skill:Review", "skill")), known)
	ae := wantConfigErr(t, err)
	if !strings.Contains(ae.Message, `"skill:Review" collides with "skill:review" (line 6)`) {
		t.Fatalf("want a collision of skill:Review with skill:review, got %v", err)
	}
	if ae.Details["line"] != 14 || ae.Details["key"] != "modules[2].id" {
		t.Fatalf("details %v, want line 14, key modules[2].id", ae.Details)
	}
}

// TestModuleIDChecksKeepOrder: a duplicate id or an unknown type is still
// reported as such, not as a malformed id.
func TestModuleIDChecksKeepOrder(t *testing.T) {
	_, err := manifest.Parse(withModules(moduleYAML("x", "skill")+moduleYAML("x", "skill")), known)
	if err == nil || !strings.Contains(err.Error(), "duplicate module id") {
		t.Fatalf("want duplicate module id, got %v", err)
	}
	_, err = manifest.Parse(withModules(moduleYAML("widget:x", "widget")), known)
	if err == nil || !strings.Contains(err.Error(), `unknown type "widget"`) {
		t.Fatalf("want unknown type, got %v", err)
	}
}

// TestLocalPathOutsideRepoWarns: a local_path that is absolute, under ~ or
// climbs out of the repo loads with a warning naming the module and line.
func TestLocalPathOutsideRepoWarns(t *testing.T) {
	for _, tc := range []struct{ path, why string }{
		{"/opt/skills/x", "is absolute"},
		{"~/skills/x", "is absolute"},
		{"~", "is absolute"},
		{"C:/skills/x", "is absolute"},
		{`C:\skills\x`, "is absolute"},
		{`\\server\share\x`, "is absolute"},
		{"../shared/x", "leaves the repo"},
		{"modules/../../x", "leaves the repo"},
		{`..\x`, "leaves the repo"},
		{"..", "leaves the repo"},
	} {
		mods := fmt.Sprintf("  - id: skill:x\n    type: skill\n    source: {local_path: {path: %q}}\n", tc.path)
		m, err := manifest.Parse(withModules(mods), known)
		if err != nil {
			t.Fatalf("%s: %v", tc.path, err)
		}
		want := fmt.Sprintf("agentpack.yaml line 8: module \"skill:x\": source.local_path.path %q %s", tc.path, tc.why)
		if len(m.Warnings) != 1 || !strings.HasPrefix(m.Warnings[0], want) {
			t.Fatalf("%s: warnings %q, want one starting %q", tc.path, m.Warnings, want)
		}
	}
	for _, p := range []string{"modules/x", "./x", "modules/../x", "~x", "a:b"} {
		mods := fmt.Sprintf("  - id: skill:x\n    type: skill\n    source: {local_path: {path: %q}}\n", p)
		m, err := manifest.Parse(withModules(mods), known)
		if err != nil || len(m.Warnings) != 0 {
			t.Fatalf("%s: want no warning, got %v %q", p, err, m.Warnings)
		}
	}
}
