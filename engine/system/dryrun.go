package system

import (
	"io/fs"
	"sort"
	"sync"
)

// DryRun reads through to Base and records writes without performing
// them. Reads of a recorded path see the recorded bytes, so a dry run walks
// exactly as an apply would.
type DryRun struct {
	Base System

	mu      sync.Mutex
	ops     []Op
	pending map[string]int // path → index into ops
}

// NewDryRun returns a recording System over base.
func NewDryRun(base System) *DryRun {
	return &DryRun{Base: base, pending: map[string]int{}}
}

// ReadFile implements System.
func (s *DryRun) ReadFile(path string) ([]byte, error) {
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
func (s *DryRun) Lstat(path string) (fs.FileInfo, error) {
	s.mu.Lock()
	op, ok := s.lookup(path)
	s.mu.Unlock()
	if ok && op.Op == "remove" {
		return nil, fs.ErrNotExist
	}
	return s.Base.Lstat(path)
}

// ReadDir implements System.
func (s *DryRun) ReadDir(path string) ([]fs.DirEntry, error) { return s.Base.ReadDir(path) }

// WriteFile implements System.
func (s *DryRun) WriteFile(path string, data []byte, perm fs.FileMode) error {
	return s.record(Op{Op: "write", Path: path, Data: append([]byte(nil), data...), Perm: perm})
}

// Remove implements System.
func (s *DryRun) Remove(path string) error {
	return s.record(Op{Op: "remove", Path: path})
}

func (s *DryRun) record(op Op) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ops = append(s.ops, op)
	s.pending[op.Path] = len(s.ops) - 1
	return nil
}

func (s *DryRun) lookup(path string) (Op, bool) {
	i, ok := s.pending[path]
	if !ok {
		return Op{}, false
	}
	return s.ops[i], true
}

// Ops returns the recorded mutations in order.
func (s *DryRun) Ops() []Op {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Op(nil), s.ops...)
}

// Paths returns the sorted set of paths the recorded ops touch.
func (s *DryRun) Paths() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.pending))
	for p := range s.pending {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}
