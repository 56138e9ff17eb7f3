package engine_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/targets"
)

// TestRedeployRewritesLargeManifestWhole: when a deploy replaces every
// file, the target manifest (large, and not worth saving as a delta) is
// saved whole in the snapshot's pack, let go of, and written from the
// pack: the file on disk lists every file with the hash it now has, and
// a rollback puts the previous manifest back byte for byte.
func TestRedeployRewritesLargeManifestWhole(t *testing.T) {
	env := testEnv(t)
	repo := benchRepo(t, 20, 5) // 100 files: a manifest of about 20 KB
	e := engine.New(env, targets.NewSet())
	req := engine.Request{Repo: repo}
	if _, _, err := e.Deploy(context.Background(), req, true, engine.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	found, _ := filepath.Glob(filepath.Join(env.Cwd, "*", "*", ".agentpack.manifest.codex.json"))
	if len(found) != 1 {
		t.Fatalf("manifests: %v", found)
	}
	manifest := found[0]
	first := mustRead(t, manifest)
	// Every skill is renamed: the new manifest shares no line with the
	// old, so no delta is worth saving.
	yaml := filepath.Join(repo, "agentpack.yaml")
	mustWrite(t, yaml, strings.ReplaceAll(mustRead(t, yaml), "skill:s", "skill:x"))
	skills, _ := filepath.Glob(filepath.Join(repo, "modules", "*", "SKILL.md"))
	for _, s := range skills {
		mustWrite(t, s, strings.Replace(mustRead(t, s), "name: s", "name: x", 1))
	}
	_, res, err := e.Deploy(context.Background(), req, true, engine.ApplyOptions{})
	if err != nil || !res.Applied {
		t.Fatalf("redeploy: %v, %+v", err, res)
	}
	var m struct {
		ManagedFiles []struct {
			Path   string `json:"path"`
			SHA256 string `json:"sha256"`
		} `json:"managed_files"`
	}
	if err := json.Unmarshal([]byte(mustRead(t, manifest)), &m); err != nil || len(m.ManagedFiles) != 100 {
		t.Fatalf("manifest after the redeploy: %d files, %v", len(m.ManagedFiles), err)
	}
	for _, f := range m.ManagedFiles {
		sum := sha256.Sum256([]byte(mustRead(t, filepath.Join(filepath.Dir(manifest), filepath.FromSlash(f.Path)))))
		if hex.EncodeToString(sum[:]) != f.SHA256 {
			t.Fatalf("manifest lists %s with %s, the file hashes to %x", f.Path, f.SHA256, sum)
		}
	}
	if _, _, err := e.Rollback(context.Background(), engine.RollbackOptions{Last: true}); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, manifest); got != first {
		t.Fatal("rollback did not put the first manifest back byte for byte")
	}
}
