//go:build unix

package fsys

import (
	"errors"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/agentpack/agentpack/internal/apperr"
)

// TestReadFileRefusesAFIFOWithoutWaiting: a FIFO where a file should be
// (a planted manifest, a module file swapped since the plan) is refused
// at once with E_IO_INVALID_PATH. Its open used to wait for a writer:
// status and deploy hung until killed.
func TestReadFileRefusesAFIFOWithoutWaiting(t *testing.T) {
	fifo := AbsPath(filepath.Join(t.TempDir(), "manifest.json"))
	if err := syscall.Mkfifo(fifo.String(), 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	sys := NewRealSystem(RealSystemOptions{})
	done := make(chan error, 1)
	go func() {
		_, err := sys.ReadFile(fifo)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, ErrNotRegular) || apperr.CodeOf(err) != apperr.IOInvalidPath {
			t.Fatalf("ReadFile of a FIFO: %v (code %s), want ErrNotRegular as %s", err, apperr.CodeOf(err), apperr.IOInvalidPath)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ReadFile of a FIFO still waits after 10 s")
	}
}

// TestReadFileOfAFolderIsEISDIR: a folder read as a file gives the error
// it always gave (os.ReadFile's EISDIR).
func TestReadFileOfAFolderIsEISDIR(t *testing.T) {
	_, err := NewRealSystem(RealSystemOptions{}).ReadFile(AbsPath(t.TempDir()))
	if !errors.Is(err, syscall.EISDIR) {
		t.Fatalf("ReadFile of a folder: %v, want EISDIR", err)
	}
}

// TestReadRangeRefusesAFIFOWithoutWaiting: a FIFO planted where a
// snapshot's pack should be is refused at once, as by ReadFile; its open
// used to wait for a writer.
func TestReadRangeRefusesAFIFOWithoutWaiting(t *testing.T) {
	fifo := AbsPath(filepath.Join(t.TempDir(), "pack"))
	if err := syscall.Mkfifo(fifo.String(), 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := NewRealSystem(RealSystemOptions{}).ReadRange(fifo, 0, 4)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, ErrNotRegular) || apperr.CodeOf(err) != apperr.IOInvalidPath {
			t.Fatalf("ReadRange of a FIFO: %v (code %s), want ErrNotRegular as %s", err, apperr.CodeOf(err), apperr.IOInvalidPath)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ReadRange of a FIFO still waits after 10 s")
	}
}
