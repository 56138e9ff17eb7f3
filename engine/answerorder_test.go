package engine

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/agentpack/agentpack/internal/fsys"
)

// A kept answer lists the repo's paths first, each part in path order, so
// that its check comes to an edited source before it stats every target.
func TestSourcesFirst(t *testing.T) {
	var entries []fsys.FingerprintEntry
	for _, p := range []string{"/home/.codex/AGENTS.md", "/proj/.agents/skills/s/SKILL.md", "/repo", "/repo/agentpack.yaml", "/repo/modules/s/SKILL.md", "/repo2/x", "/zz"} {
		entries = append(entries, fsys.FingerprintEntry{Path: abs(filepath.FromSlash(p))})
	}
	var got []string
	for _, e := range sourcesFirst(fsys.NewFingerprint(entries), abs(filepath.FromSlash("/repo"))).Entries() {
		got = append(got, filepath.ToSlash(e.Path.String()))
	}
	want := []string{"/repo", "/repo/agentpack.yaml", "/repo/modules/s/SKILL.md", "/home/.codex/AGENTS.md", "/proj/.agents/skills/s/SKILL.md", "/repo2/x", "/zz"}
	if !slices.Equal(got, want) {
		t.Errorf("sourcesFirst = %v, want %v", got, want)
	}
}
