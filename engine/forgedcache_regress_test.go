package engine_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/engine/lockfile"
	"github.com/agentpack/agentpack/targets"
)

// TestFetchRepairsAForgedCheckout: a cached checkout whose file and tree
// record were both rewritten passes its own check but disagrees with the
// lockfile; fetch downloads it again once, says so in a warning, and the
// files are the locked ones again.
func TestFetchRepairsAForgedCheckout(t *testing.T) {
	env := testEnv(t)
	up := newUpstream(t)
	up.commit(map[string]string{"skills/review/SKILL.md": skillMD("v1")}, "v1")
	repo := writeRepo(t, map[string]string{"agentpack.yaml": `version: 1
profiles: {default: {include_tags: [base]}}
targets: {codex: {scope: project}}
modules:
  - id: skill:review
    type: skill
    tags: [base]
    source: {git: {url: "file://` + filepath.ToSlash(up.dir) + `", ref: v1, subdir: skills/review}}
`})
	e := engine.New(env, targets.NewSet())
	req := engine.Request{Repo: repo}
	lk, _, err := e.Lock(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := e.GitCache().Path(lk.Modules[0].ResolvedSource.Git.URL, lk.Modules[0].ResolvedVersion)
	if err != nil {
		t.Fatal(err)
	}
	skill := filepath.Join(dir, "skills/review/SKILL.md")
	forge := func(path, text string) {
		t.Helper()
		_ = os.Chmod(path, 0o644)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	forge(skill, skillMD("forged"))
	files, err := lockfile.HashDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	markerPath := filepath.Join(dir, lockfile.TreeMarker)
	var mk map[string]any
	raw, _ := os.ReadFile(markerPath)
	if err := json.Unmarshal(raw, &mk); err != nil {
		t.Fatal(err)
	}
	mk["tree_sha256"] = lockfile.ModuleHash(files)
	raw, _ = json.Marshal(mk)
	forge(markerPath, string(raw))

	_, warnings, err := e.Fetch(context.Background(), req)
	if err != nil {
		t.Fatalf("fetch of a forged checkout: %v", err)
	}
	w := strings.Join(warnings, "\n")
	if !strings.Contains(w, "was damaged and was downloaded again") {
		t.Errorf("no repair warning: %q", warnings)
	}
	if strings.Contains(w, "is corrupted") {
		t.Errorf("the forgery was caught by the checkout's own check, not by the lockfile: %q", warnings)
	}
	if got := mustRead(t, skill); strings.Contains(got, "forged") || !strings.Contains(got, "v1") {
		t.Fatalf("the checkout still has %q", got)
	}
}
