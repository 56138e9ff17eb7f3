package fsys

import (
	"bytes"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
)

// OpKind names a mutation a [DryRunSystem] records.
type OpKind string

// The mutations a [DryRunSystem] records, one per mutating [System] method.
const (
	OpWrite     OpKind = "write"
	OpRemove    OpKind = "remove"
	OpRemoveAll OpKind = "remove_all"
	OpMkdirAll  OpKind = "mkdir_all"
	OpRename    OpKind = "rename"
	OpSymlink   OpKind = "symlink"
)

// Op is one mutation a [DryRunSystem] recorded instead of performing it.
type Op struct {
	Kind OpKind
	// Path is the path changed; for a rename, the new path.
	Path AbsPath
	// Data is the content of a write.
	Data []byte
	// Perm is the permission of a write or a mkdir_all.
	Perm fs.FileMode
	// OldPath is the path a rename moves away from.
	OldPath AbsPath
	// LinkTarget is the content of a symlink.
	LinkTarget string
}

// DryRunSystem reads through to a base [System] and records mutations
// without performing them. Its reads see the recorded mutations, so a dry
// run walks exactly as an apply would: a file read after a recorded write
// has the recorded bytes, one read after a recorded remove does not exist.
// Mutations always succeed; whether the real ones would is for the apply to
// find out.
type DryRunSystem struct {
	base System

	mu  sync.Mutex
	ops []Op
	// over holds what the recorded ops changed; a nil node was removed. A
	// folder in over is complete: nothing of base below it shows through.
	// Entries below a removed path, a file or a link are stale and never
	// read; whatever makes a path a folder again clears them first, so the
	// common ops need not scan the map.
	over map[AbsPath]*memNode
	// kids names, for each folder, its entries in over: a listing looks
	// them up instead of scanning over (a dry-run rollback of 10,000
	// files lists 2,000 folders).
	kids map[AbsPath]map[string]struct{}
}

// NewDryRunSystem returns a DryRunSystem reading from base.
func NewDryRunSystem(base System) *DryRunSystem {
	return &DryRunSystem{base: base, over: map[AbsPath]*memNode{}, kids: map[AbsPath]map[string]struct{}{}}
}

// Base returns the System the dry run reads from (the disk as it was).
func (s *DryRunSystem) Base() System { return s.base }

// Ops returns the recorded mutations in the order they were made.
func (s *DryRunSystem) Ops() []Op {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.ops)
}

// ReadFile implements [System].
func (s *DryRunSystem) ReadFile(path AbsPath) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.readFile(path)
}

// Lstat implements [System].
func (s *DryRunSystem) Lstat(path AbsPath) (fs.FileInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lstat(path)
}

// Stat implements [System].
func (s *DryRunSystem) Stat(path AbsPath) (fs.FileInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stat(path)
}

// ReadDir implements [System].
func (s *DryRunSystem) ReadDir(path AbsPath) ([]fs.DirEntry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.readDir(path)
}

// Readlink implements [System].
func (s *DryRunSystem) Readlink(path AbsPath) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.readlink(path)
}

// WriteFile implements [System].
func (s *DryRunSystem) WriteFile(path AbsPath, data []byte, perm fs.FileMode) error {
	return s.writeFile(path, data, perm, false)
}

// writeFile is WriteFile, or with create CreateFile.
func (s *DryRunSystem) writeFile(path AbsPath, data []byte, perm fs.FileMode, create bool) error {
	return s.keep(path, bytes.Clone(data), perm, create)
}

// writeHandedOver implements [handedOverWriter]: data is kept, not copied.
func (s *DryRunSystem) writeHandedOver(path AbsPath, data []byte, perm fs.FileMode) error {
	return s.keep(path, data, perm, false)
}

// keep records the write of data, which it keeps, to path.
func (s *DryRunSystem) keep(path AbsPath, data []byte, perm fs.FileMode, create bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if fi, err := s.lstat(path); err == nil {
		if create {
			return existsError(path)
		}
		if err := refuseNonFile(path, fi.Mode()); err != nil {
			return err
		}
	}
	s.ops = append(s.ops, Op{Kind: OpWrite, Path: path, Data: data, Perm: perm})
	s.mkdirAll(path.Dir(), 0o755)
	s.put(path, &memNode{mode: perm.Perm(), data: data})
	return nil
}

// CreateFile implements [Creator].
func (s *DryRunSystem) CreateFile(path AbsPath, data []byte, perm fs.FileMode) error {
	return s.writeFile(path, data, perm, true)
}

// Remove implements [System].
func (s *DryRunSystem) Remove(path AbsPath) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	// As on a disk, a folder goes only when empty: callers rely on that to
	// remove a folder "if nothing was left in it".
	if fi, err := s.lstat(path); err == nil && fi.IsDir() {
		if entries, err := s.readDir(path); err == nil && len(entries) > 0 {
			return IOError(syscall.ENOTEMPTY, "remove", path)
		}
	}
	s.ops = append(s.ops, Op{Kind: OpRemove, Path: path})
	s.put(path, nil)
	return nil
}

// RemoveAll implements [System].
func (s *DryRunSystem) RemoveAll(path AbsPath) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ops = append(s.ops, Op{Kind: OpRemoveAll, Path: path})
	s.drop(path)
	return nil
}

// MkdirAll implements [System].
func (s *DryRunSystem) MkdirAll(path AbsPath, perm fs.FileMode) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ops = append(s.ops, Op{Kind: OpMkdirAll, Path: path, Perm: perm})
	s.mkdirAll(path, perm)
	return nil
}

// Rename implements [System].
func (s *DryRunSystem) Rename(oldpath, newpath AbsPath) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ops = append(s.ops, Op{Kind: OpRename, Path: newpath, OldPath: oldpath})
	// Copy what oldpath holds now before dropping it: newpath may be below it.
	moved := map[AbsPath]*memNode{}
	s.collect(oldpath, newpath, moved)
	if len(moved) == 0 {
		return nil
	}
	s.drop(oldpath)
	s.drop(newpath)
	for p, n := range moved {
		s.put(p, n)
	}
	return nil
}

// Symlink implements [System].
func (s *DryRunSystem) Symlink(oldname string, newname AbsPath) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ops = append(s.ops, Op{Kind: OpSymlink, Path: newname, LinkTarget: oldname})
	s.put(newname, &memNode{mode: fs.ModeSymlink | 0o777, link: oldname})
	return nil
}

// lookup returns what the recorded ops made of path; ok is false when they
// did not touch it, so base answers.
func (s *DryRunSystem) lookup(path AbsPath) (n *memNode, ok bool) {
	if n, ok := s.over[path]; ok {
		return n, true
	}
	for d := path; d.Dir() != d && len(s.over) > 0; {
		d = d.Dir()
		if _, ok := s.over[d]; ok {
			// Below a removed path, a file, a link or a new folder, path
			// does not exist.
			return nil, true
		}
	}
	return nil, false
}

// follow resolves the symlinks the recorded ops created at path's last
// element, and returns the path they lead to and what is there.
func (s *DryRunSystem) follow(op string, path AbsPath) (AbsPath, *memNode, bool, error) {
	for hops := 0; hops <= maxLinkHops; hops++ {
		n, ok := s.lookup(path)
		if !ok || n == nil || !n.isLink() {
			return path, n, ok, nil
		}
		target := n.link
		if !filepath.IsAbs(target) {
			target = filepath.Join(path.Dir().String(), target)
		}
		path = AbsPath(filepath.Clean(target))
	}
	return "", nil, false, IOError(syscall.ELOOP, op, path)
}

func (s *DryRunSystem) readFile(path AbsPath) ([]byte, error) {
	p, n, ok, err := s.follow("read", path)
	switch {
	case err != nil:
		return nil, err
	case !ok:
		return s.base.ReadFile(p)
	case n == nil:
		return nil, IOError(syscall.ENOENT, "read", path)
	case n.mode.IsDir():
		return nil, IOError(syscall.EISDIR, "read", path)
	}
	return bytes.Clone(n.data), nil
}

func (s *DryRunSystem) lstat(path AbsPath) (fs.FileInfo, error) {
	n, ok := s.lookup(path)
	switch {
	case !ok:
		return s.base.Lstat(path)
	case n == nil:
		return nil, IOError(syscall.ENOENT, "stat", path)
	}
	return n.info(path.Base()), nil
}

func (s *DryRunSystem) stat(path AbsPath) (fs.FileInfo, error) {
	p, n, ok, err := s.follow("stat", path)
	switch {
	case err != nil:
		return nil, err
	case !ok:
		return s.base.Stat(p)
	case n == nil:
		return nil, IOError(syscall.ENOENT, "stat", path)
	}
	return n.info(path.Base()), nil
}

func (s *DryRunSystem) readlink(path AbsPath) (string, error) {
	n, ok := s.lookup(path)
	switch {
	case !ok:
		return s.base.Readlink(path)
	case n == nil:
		return "", IOError(syscall.ENOENT, "read link", path)
	case !n.isLink():
		return "", IOError(syscall.EINVAL, "read link", path)
	}
	return n.link, nil
}

// readDir merges base's listing of path with the recorded changes to it.
func (s *DryRunSystem) readDir(path AbsPath) ([]fs.DirEntry, error) {
	p, n, ok, err := s.follow("list", path)
	var entries []fs.DirEntry
	switch {
	case err != nil:
		return nil, err
	case !ok:
		if entries, err = s.base.ReadDir(p); err != nil {
			return nil, err
		}
	case n == nil:
		return nil, IOError(syscall.ENOENT, "list", path)
	case !n.mode.IsDir():
		return nil, IOError(syscall.ENOTDIR, "list", path)
	}
	entries = slices.DeleteFunc(entries, func(e fs.DirEntry) bool {
		_, changed := s.over[p.JoinName(e.Name())]
		return changed
	})
	for name := range s.kids[p] {
		if child := s.over[p.JoinName(name)]; child != nil {
			entries = append(entries, fs.FileInfoToDirEntry(child.info(name)))
		}
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, nil
}

// mkdirAll records path and its missing parents as new folders.
func (s *DryRunSystem) mkdirAll(path AbsPath, perm fs.FileMode) {
	if fi, err := s.stat(path); err == nil && fi.IsDir() {
		return
	}
	if path.Dir() != path {
		s.mkdirAll(path.Dir(), perm)
	}
	s.drop(path)
	s.put(path, &memNode{mode: fs.ModeDir | perm.Perm()})
}

// drop records path, and everything below it, as removed, clearing any
// stale entries below it.
func (s *DryRunSystem) drop(path AbsPath) {
	for q := range s.over {
		if path.Contains(q) {
			s.forget(q)
		}
	}
	s.put(path, nil)
}

// put records what path is now (nil: removed).
func (s *DryRunSystem) put(path AbsPath, n *memNode) {
	s.over[path] = n
	if dir := path.Dir(); dir != path {
		names := s.kids[dir]
		if names == nil {
			names = map[string]struct{}{}
			s.kids[dir] = names
		}
		names[path.Base()] = struct{}{}
	}
}

// forget clears what was recorded of path.
func (s *DryRunSystem) forget(path AbsPath) {
	delete(s.over, path)
	dir := path.Dir()
	if names := s.kids[dir]; names != nil && dir != path {
		delete(names, path.Base())
		if len(names) == 0 {
			delete(s.kids, dir)
		}
	}
}

// collect copies what the view holds at from, recursively, into moved under
// the path to.
func (s *DryRunSystem) collect(from, to AbsPath, moved map[AbsPath]*memNode) {
	fi, err := s.lstat(from)
	if err != nil {
		return
	}
	n := &memNode{mode: fi.Mode()}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		n.link, _ = s.readlink(from)
	case fi.IsDir():
		entries, _ := s.readDir(from)
		for _, e := range entries {
			s.collect(from.JoinName(e.Name()), to.JoinName(e.Name()), moved)
		}
	default:
		n.data, _ = s.readFile(from)
	}
	moved[to] = n
}
