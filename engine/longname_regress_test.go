package engine_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/targets"
)

// TestDeployLongFileName: a file name of 240 bytes (NAME_MAX is 255)
// deploys: the atomic write's temp file has a short name of its own rather
// than one derived from the destination's.
func TestDeployLongFileName(t *testing.T) {
	env := testEnv(t)
	long := strings.Repeat("n", 236) + ".txt"
	repo := writeRepo(t, map[string]string{
		"agentpack.yaml":         codexOnlyManifest,
		"modules/base/AGENTS.md": "# base\n",
		"modules/s/SKILL.md":     "---\nname: s\ndescription: d\n---\nbody\n",
		"modules/s/" + long:      "long\n",
	})
	e := engine.New(env, targets.NewSet())
	if _, _, err := e.Deploy(context.Background(), engine.Request{Repo: repo}, true, engine.ApplyOptions{}); err != nil {
		t.Fatalf("deploying a skill file with a %d-byte name: %v", len(long), err)
	}
	if got := mustRead(t, filepath.Join(env.Cwd, ".agents", "skills", "s", long)); got != "long\n" {
		t.Fatalf("got %q", got)
	}
}
