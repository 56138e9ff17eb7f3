package engine_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/targets"
)

// TestTargetCachesAgreeWithColdStatus edits deployed files, managed folders
// and a target manifest in ways the target-side caches (stat cache,
// decoded manifests, folder listings) could miss, and checks after each
// edit that status with the caches warm says exactly what a status without
// any of them says, both right after the edit and once the edit is old
// enough to be cached itself.
func TestTargetCachesAgreeWithColdStatus(t *testing.T) {
	env := testEnv(t)
	req := engine.Request{Repo: codexRepo(t)}
	ctx := context.Background()
	_, d, err := engine.New(env, targets.NewSet()).Deploy(ctx, req, true, engine.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var skillMD, agentsMD string
	for _, c := range d.Changes {
		switch filepath.Base(c.Path.String()) {
		case "SKILL.md":
			skillMD = c.Path.String()
		case "AGENTS.md":
			agentsMD = c.Path.String()
		}
	}
	if skillMD == "" || agentsMD == "" {
		t.Fatalf("deploy wrote %+v", d.Changes)
	}
	skillDir := filepath.Dir(skillMD)
	cacheDir := filepath.Join(env.StateDir(), "statcache")
	status := func() []engine.DriftItem {
		t.Helper()
		_, s, err := engine.New(env, targets.NewSet()).Status(ctx, req, nil)
		if err != nil {
			t.Fatal(err)
		}
		return s.Drift
	}
	cold := func() []engine.DriftItem {
		t.Helper()
		if err := os.Rename(cacheDir, cacheDir+".aside"); err != nil {
			t.Fatal(err)
		}
		defer func() {
			os.RemoveAll(cacheDir)
			os.Rename(cacheDir+".aside", cacheDir)
		}()
		return status()
	}
	settle := func() { time.Sleep(150 * time.Millisecond) } // past the racy window
	settle()
	status()
	if m, _ := filepath.Glob(filepath.Join(cacheDir, "manifests", "*.bin")); len(m) == 0 {
		t.Fatal("no manifest cache after a status")
	}

	manifestOf := func() string {
		matches, _ := filepath.Glob(filepath.Join(filepath.Dir(skillDir), ".agentpack.manifest.*.json"))
		if len(matches) != 1 {
			t.Fatalf("manifests next to %s: %q", skillDir, matches)
		}
		return matches[0]
	}
	for _, step := range []struct {
		name  string
		edit  func()
		shows string // a drift item the edit makes: kind and file name
	}{
		{"same-size rewrite with the mtime put back", func() {
			fi, _ := os.Stat(skillMD)
			data := mustRead(t, skillMD)
			mustWrite(t, skillMD, strings.ToUpper(data))
			os.Chtimes(skillMD, fi.ModTime(), fi.ModTime())
		}, "modified SKILL.md"},
		{"an extra file in a managed folder", func() { mustWrite(t, filepath.Join(skillDir, "notes.md"), "mine\n") }, "extra notes.md"},
		{"an extra file in a new subfolder", func() { mustWrite(t, filepath.Join(skillDir, "sub", "x.md"), "x\n") }, "extra x.md"},
		{"the extra file replaced by a folder", func() {
			os.Remove(filepath.Join(skillDir, "notes.md"))
			mustWrite(t, filepath.Join(skillDir, "notes.md", "y.md"), "y\n")
		}, "extra y.md"},
		{"a managed file removed", func() { os.Remove(agentsMD) }, "missing AGENTS.md"},
		{"a manifest entry removed by hand, same size", func() {
			path := manifestOf()
			fi, _ := os.Stat(path)
			var m map[string]any
			if err := json.Unmarshal([]byte(mustRead(t, path)), &m); err != nil {
				t.Fatal(err)
			}
			files := m["managed_files"].([]any)
			m["managed_files"] = files[1:]
			out, _ := json.MarshalIndent(m, "", "  ")
			if pad := int(fi.Size()) - len(out) - 1; pad > 0 {
				out = append(out, strings.Repeat(" ", pad)...) // same size as before
			}
			os.WriteFile(path, append(out, '\n'), 0o644)
			os.Chtimes(path, fi.ModTime(), fi.ModTime())
		}, "pending SKILL.md"},
	} {
		t.Run(step.name, func(t *testing.T) {
			step.edit()
			want := cold()
			var kinds []string
			for _, it := range want {
				kinds = append(kinds, it.Kind+" "+filepath.Base(it.Path.String()))
			}
			if !slices.Contains(kinds, step.shows) {
				t.Fatalf("status without caches shows %q, not %q", kinds, step.shows)
			}
			if got := status(); !reflect.DeepEqual(got, want) {
				t.Fatalf("right after the edit, cached status says\n%+v\nwithout caches\n%+v", got, want)
			}
			settle()
			status() // caches what the edit left
			if got := status(); !reflect.DeepEqual(got, cold()) {
				t.Fatalf("once cached, status says\n%+v\nwithout caches\n%+v", got, want)
			}
		})
	}
}
