//go:build unix

package module

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/agentpack/agentpack/internal/apperr"
)

func TestSpecialFileIsRefused(t *testing.T) {
	dir := t.TempDir()
	tree(t, dir, map[string]string{"mod/SKILL.md": skillMD, "mod/pipe": "-> fifo"})
	if err := syscall.Mkfifo(filepath.Join(dir, "mod", "fifo"), 0o644); err != nil {
		t.Skip("cannot make a FIFO:", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := LoadModule(realSys, &Module{ID: "skill:review", Type: TypeSkill}, filepath.Join(dir, "mod"))
		done <- err
	}()
	select {
	case err := <-done:
		// test that a FIFO (and a link to one) is refused without being opened
		if apperr.CodeOf(err) != apperr.ModuleInvalid {
			t.Fatalf("want E_MODULE_INVALID, got %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("loading a module with a FIFO blocked")
	}
}
