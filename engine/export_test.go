package engine

import (
	"sync/atomic"

	"github.com/agentpack/agentpack/internal/fsys"
)

// CountReads counts the files read through it (ReadFile), for the tests
// of both test packages.
type CountReads struct {
	fsys.System
	N *atomic.Int64
}

// ReadFile implements [fsys.System].
func (c CountReads) ReadFile(p fsys.AbsPath) ([]byte, error) {
	c.N.Add(1)
	return c.System.ReadFile(p)
}

// SetDiffHeld sets how many bytes of sources a diff holds (see diffHeld)
// for a test, and returns what puts it back.
func SetDiffHeld(n int64) (restore func()) {
	old := diffHeld
	diffHeld = n
	return func() { diffHeld = old }
}

// SetProbeMaxFiles sets the most module files a relocation probe compiles
// (see probeMaxFiles) for a test, and returns what puts it back.
func SetProbeMaxFiles(n int) (restore func()) {
	old := probeMaxFiles
	probeMaxFiles = n
	return func() { probeMaxFiles = old }
}
