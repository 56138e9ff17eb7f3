package module

import (
	"strings"
	"testing"
)

// TestValidateID: an id is `<type>:<name>` with the module's own type and a
// name that is one portable path element, equal to its own SafeName.
func TestValidateID(t *testing.T) {
	long := strings.Repeat("n", MaxNameBytes)
	for _, id := range []string{"skill:review", "skill:release-notes", "skill:a.b_C-9", "skill:" + long} {
		if err := ValidateID(id, TypeSkill); err != nil {
			t.Errorf("%s: %v", id, err)
		}
		if name := strings.TrimPrefix(id, "skill:"); SafeName(name) != name {
			t.Errorf("%s: a valid name must be its own SafeName, got %q", id, SafeName(name))
		}
	}
	if err := ValidateID("instructions:base", TypeInstructions); err != nil {
		t.Error(err)
	}
	for _, id := range []string{"", "skill", "skill:", ":x", "skill:.", "skill:..", "skill:.hidden", "skill:x.", "skill:a..b",
		"skill:café", "skill:a b", "skill:a/b", `skill:a\b`, "skill:a:b", "skill:" + long + "n", "prompt:review", "Skill:review"} {
		if err := ValidateID(id, TypeSkill); err == nil {
			t.Errorf("%q: accepted", id)
		}
	}
}
