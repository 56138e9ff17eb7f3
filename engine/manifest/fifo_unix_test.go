//go:build unix

package manifest

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
)

// TestLoadRefusesAFIFOConfig: an agentpack.yaml that is a FIFO is refused
// at once with E_CONFIG_INVALID naming what it is; reading it used to wait
// for a writer.
func TestLoadRefusesAFIFOConfig(t *testing.T) {
	repo := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(repo, FileName), 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := Load(fsys.NewRealSystem(fsys.RealSystemOptions{}), fsys.AbsPath(repo), []string{"codex"})
		done <- err
	}()
	select {
	case err := <-done:
		if apperr.CodeOf(err) != apperr.ConfigInvalid || !strings.Contains(err.Error(), "not a regular file") {
			t.Fatalf("Load of a FIFO agentpack.yaml: %v (code %s)", err, apperr.CodeOf(err))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Load of a FIFO agentpack.yaml still waits after 10 s")
	}
}
