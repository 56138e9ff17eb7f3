package engine

import (
	"io/fs"
	"sort"
	"sync"
)

// DryRunSystem reads through to Base and records writes without performing
// them. Reads of a recorded path see the recorded bytes, so a dry run walks
// exactly as an apply would.
type DryRunSystem struct {
	Base System

	mu      sync.Mutex
	ops     []SystemOp
	pending map[string]int // path → index into ops
}

// NewDryRunSystem returns a recording System over base.
func NewDryRunSystem(base System) *DryRunSystem {
	return &DryRunSystem{Base: base, pending: map[string]int{}}
}

// ReadFile implements System.
func (s *DryRunSystem) ReadFile(path string) ([]byte, error) {
	s.mu.Lock()
	op, ok := s.lookup(path)
	s.mu.Unlock()
	if ok {
		if op.Op == "remove" {
			return nil, fs.ErrNotExist
		}
		return append([]byte(nil), op.Data...), nil
	}
	return s.Base.ReadFile(path)
}

// Lstat implements System.
func (s *DryRunSystem) Lstat(path string) (fs.FileInfo, error) {
	s.mu.Lock()
	op, ok := s.lookup(path)
	s.mu.Unlock()
	if ok && op.Op == "remove" {
		return nil, fs.ErrNotExist
	}
	return s.Base.Lstat(path)
}

// ReadDir implements System.
func (s *DryRunSystem) ReadDir(path string) ([]fs.DirEntry, error) { return s.Base.ReadDir(path) }

// WriteFile implements System.
func (s *DryRunSystem) WriteFile(path string, data []byte, perm fs.FileMode) error {
	return s.record(SystemOp{Op: "write", Path: path, Data: append([]byte(nil), data...), Perm: perm})
}

// Remove implements System.
func (s *DryRunSystem) Remove(path string) error {
	return s.record(SystemOp{Op: "remove", Path: path})
}

func (s *DryRunSystem) record(op SystemOp) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ops = append(s.ops, op)
	s.pending[op.Path] = len(s.ops) - 1
	return nil
}

func (s *DryRunSystem) lookup(path string) (SystemOp, bool) {
	i, ok := s.pending[path]
	if !ok {
		return SystemOp{}, false
	}
	return s.ops[i], true
}

// Ops returns the recorded mutations in order.
func (s *DryRunSystem) Ops() []SystemOp {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]SystemOp(nil), s.ops...)
}

// Paths returns the sorted set of paths the recorded ops touch.
func (s *DryRunSystem) Paths() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.pending))
	for p := range s.pending {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}
