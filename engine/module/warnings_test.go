package module

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestSkillNameWarning: a skill whose SKILL.md `name` differs from the
// folder it deploys to (its id's name) loads, with a warning naming both.
func TestSkillNameWarning(t *testing.T) {
	dir := t.TempDir()
	tree(t, dir, map[string]string{"review/SKILL.md": skillMD, "other/SKILL.md": skillMD, "prompt.md": "---\nname: x\n---\nhi\n"})
	for _, tc := range []struct {
		mod  Module
		path string
		want string
	}{
		{Module{ID: "skill:review", Type: TypeSkill}, "review", ""},
		{Module{ID: "skill:code-review", Type: TypeSkill}, "review", "module skill:code-review: SKILL.md has `name: review` but the skill deploys to the folder \"code-review\""},
		{Module{ID: "skill:review", Type: TypeSkill}, "other", ""},
		{Module{ID: "prompt:p", Type: TypePrompt}, "prompt.md", ""},
	} {
		lm, err := LoadModule(realSys, &tc.mod, filepath.Join(dir, tc.path))
		if err != nil {
			t.Fatalf("%s: %v", tc.mod.ID, err)
		}
		got := strings.Join(lm.Warnings(), "\n")
		if tc.want == "" && got != "" || !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s from %s: warnings %q, want %q", tc.mod.ID, tc.path, got, tc.want)
		}
	}
}
