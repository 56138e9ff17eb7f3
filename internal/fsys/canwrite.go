package fsys

import (
	"crypto/rand"
	"encoding/hex"
)

// writeChecker is a System that can tell whether a folder is writable
// without writing to it.
type writeChecker interface {
	CanWrite(dir AbsPath) bool
}

// CanWrite reports whether files can be created in dir. Systems that can
// answer without writing do (a read-only or recording System asks the one
// beneath it: doctor reports on the real disk without touching it); any
// other System is probed with a file created and removed.
func CanWrite(sys System, dir AbsPath) bool {
	if wc, ok := sys.(writeChecker); ok {
		return wc.CanWrite(dir)
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	probe := dir.JoinName(".agentpack-probe-" + hex.EncodeToString(b[:]))
	if sys.WriteFile(probe, nil, 0o600) != nil {
		return false
	}
	_ = sys.Remove(probe)
	return true
}

// CanWrite implements writeChecker by asking the System beneath.
func (s *ReadOnlySystem) CanWrite(dir AbsPath) bool { return CanWrite(s.base, dir) }

// CanWrite implements writeChecker by asking the System beneath.
func (s *DryRunSystem) CanWrite(dir AbsPath) bool { return CanWrite(s.base, dir) }
