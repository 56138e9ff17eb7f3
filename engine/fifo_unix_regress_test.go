//go:build unix

package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/engine/plan"
	"github.com/agentpack/agentpack/internal/apperr"
)

// TestFIFOWhereAManifestShouldBe: a FIFO in a project where a target
// manifest should be (a cloned or unpacked project can hold one) made
// status and deploy wait forever in its open. Status now treats the
// manifest as missing with a warning, and a deploy refuses to replace what
// is not a regular file with E_IO_INVALID_PATH, leaving it there.
func TestFIFOWhereAManifestShouldBe(t *testing.T) {
	env, e, req, _ := deployedCodexRepo(t)
	manifest := filepath.Join(env.Cwd, ".agents", "skills", plan.TargetManifestName("codex"))
	if _, err := os.Lstat(manifest); err != nil {
		t.Fatalf("no target manifest deployed: %v", err)
	}
	if err := os.Remove(manifest); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(manifest, 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	within := func(what string, fn func()) {
		t.Helper()
		done := make(chan struct{})
		go func() { defer close(done); fn() }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatalf("%s still waits on the FIFO after 20 s", what)
		}
	}
	within("status", func() {
		st, _, err := e.Status(context.Background(), req, nil)
		if err != nil {
			t.Errorf("status: %v", err)
			return
		}
		if !strings.Contains(strings.Join(st.Warnings, "\n"), "not a regular file") {
			t.Errorf("status warnings %q do not name the FIFO", st.Warnings)
		}
	})
	within("deploy", func() {
		_, _, err := e.Deploy(context.Background(), req, true, engine.ApplyOptions{})
		if apperr.CodeOf(err) != apperr.IOInvalidPath {
			t.Errorf("deploy over a FIFO manifest: %v, want %s", err, apperr.IOInvalidPath)
		}
	})
	if fi, err := os.Lstat(manifest); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("the FIFO was replaced or removed: %v, %v", fi, err)
	}
}
