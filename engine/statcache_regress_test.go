package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentpack/agentpack/engine"
)

// TestStatCacheSeesInPlaceRewriteWithRestoredMtime: a managed file
// rewritten in place (same inode, same size) with its mtime put back, as
// `cp -p`, `rsync -t` or `touch -r` do, is still seen as modified: the
// stat cache keys on the ctime too.
func TestStatCacheSeesInPlaceRewriteWithRestoredMtime(t *testing.T) {
	env, e, req, _ := deployedCodexRepo(t)
	for i := 0; i < 2; i++ { // warm the cache
		if _, _, err := e.Status(context.Background(), req, nil); err != nil {
			t.Fatal(err)
		}
	}
	agents := filepath.Join(env.Cwd, "AGENTS.md")
	fi, err := os.Stat(agents)
	if err != nil {
		t.Fatal(err)
	}
	orig := mustRead(t, agents)
	// In-place rewrite (O_TRUNC keeps the inode), same size, then restore mtime.
	if err := os.WriteFile(agents, []byte(strings.ToUpper(orig)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(agents, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	_, st, err := e.Status(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Drift) != 1 || st.Drift[0].Kind != engine.DriftModified {
		t.Fatalf("file content changed (%q -> %q) but status reports %+v", orig, mustRead(t, agents), st.Drift)
	}
}
