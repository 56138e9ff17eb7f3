package module

import (
	"regexp"
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

// SafeName makes of each character what the rule it documents says: the
// answers a regexp replacement of `[^A-Za-z0-9._-]` followed by trimming
// dots gives, for names already safe, Unicode, separators, dots at the
// ends, invalid UTF-8 and every single byte.
func TestSafeNameReplacesEachCharacter(t *testing.T) {
	unsafe := regexp.MustCompile(`[^A-Za-z0-9._-]`)
	want := func(s string) string {
		s = strings.Trim(unsafe.ReplaceAllString(s, "_"), ".")
		if s == "" {
			return "_"
		}
		return s
	}
	inputs := []string{"", ".", "..", "review", "a.b_C-9", "café", "日本語", "a b", "a/b", `a\b`, "a:b", "..x..", ".hidden",
		"x.", "\xff", "a\xffb", "\xe2\x82", "é.", "._.", "-", "emoji😀name", "tab\there", "nul\x00"}
	for c := range 256 {
		inputs = append(inputs, string([]byte{byte(c)}), "a"+string([]byte{byte(c)})+"z")
	}
	for _, in := range inputs {
		if got, w := SafeName(in), want(in); got != w {
			t.Errorf("SafeName(%q) = %q, want %q", in, got, w)
		}
	}
}
