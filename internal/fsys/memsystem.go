package fsys

import (
	"bytes"
	"errors"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// maxLinkHops bounds symlink resolution, as Linux does, so a link cycle
// fails with ELOOP instead of hanging.
const maxLinkHops = 40

// MemSystem is an in-memory [System] for tests. It answers like
// [RealSystem] does on Unix, with the same errors and refusals (a shared
// conformance test holds the two together); permissions are stored but not
// enforced.
type MemSystem struct {
	mu    sync.Mutex
	roots map[string]*memNode // by volume name, "" on Unix
}

// memNode is a file, folder or symlink of a [MemSystem]; [DryRunSystem]
// uses it for the changes it records.
type memNode struct {
	mode     fs.FileMode // type bits and permission
	data     []byte
	link     string
	children map[string]*memNode
}

// NewMemSystem returns an empty MemSystem: only its roots exist.
func NewMemSystem() *MemSystem { return &MemSystem{roots: map[string]*memNode{}} }

// ReadFile implements [System].
func (m *MemSystem) ReadFile(path AbsPath) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.find(path, true)
	if err == nil && n.mode.IsDir() {
		err = syscall.EISDIR
	}
	if err != nil {
		return nil, IOError(err, "read", path)
	}
	return bytes.Clone(n.data), nil
}

// Lstat implements [System].
func (m *MemSystem) Lstat(path AbsPath) (fs.FileInfo, error) { return m.stat(path, false) }

// Stat implements [System].
func (m *MemSystem) Stat(path AbsPath) (fs.FileInfo, error) { return m.stat(path, true) }

func (m *MemSystem) stat(path AbsPath, follow bool) (fs.FileInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.find(path, follow)
	if err != nil {
		return nil, IOError(err, "stat", path)
	}
	return n.info(path.Base()), nil
}

// ReadDir implements [System].
func (m *MemSystem) ReadDir(path AbsPath) ([]fs.DirEntry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.find(path, true)
	if err == nil && !n.mode.IsDir() {
		err = syscall.ENOTDIR
	}
	if err != nil {
		return nil, IOError(err, "list", path)
	}
	var entries []fs.DirEntry
	for _, name := range slices.Sorted(maps.Keys(n.children)) {
		entries = append(entries, fs.FileInfoToDirEntry(n.children[name].info(name)))
	}
	return entries, nil
}

// Readlink implements [System].
func (m *MemSystem) Readlink(path AbsPath) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := m.find(path, false)
	if err == nil && !n.isLink() {
		err = syscall.EINVAL
	}
	if err != nil {
		return "", IOError(err, "read link", path)
	}
	return n.link, nil
}

// WriteFile implements [System].
func (m *MemSystem) WriteFile(path AbsPath, data []byte, perm fs.FileMode) error {
	return m.writeFile(path, data, perm, false)
}

// writeFile is WriteFile, or with create CreateFile: one step either way.
func (m *MemSystem) writeFile(path AbsPath, data []byte, perm fs.FileMode, create bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, _, n, err := m.walk(path, false); err == nil && n != nil {
		if create {
			return existsError(path)
		}
		if err := refuseNonFile(path, n.mode); err != nil {
			return err
		}
	}
	err := m.mkdirAll(path.Dir(), 0o755)
	if err == nil {
		var dir *memNode
		var name string
		if dir, name, _, err = m.walk(path, false); err == nil {
			dir.children[name] = &memNode{mode: perm.Perm(), data: bytes.Clone(data)}
		}
	}
	return IOError(err, "write", path)
}

// CreateFile implements [Creator].
func (m *MemSystem) CreateFile(path AbsPath, data []byte, perm fs.FileMode) error {
	return m.writeFile(path, data, perm, true)
}

// Remove implements [System].
func (m *MemSystem) Remove(path AbsPath) error { return m.remove(path, false) }

// RemoveAll implements [System].
func (m *MemSystem) RemoveAll(path AbsPath) error { return m.remove(path, true) }

func (m *MemSystem) remove(path AbsPath, all bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	dir, name, n, err := m.walk(path, false)
	switch {
	case errors.Is(err, fs.ErrNotExist) || err == nil && n == nil:
		return nil
	case err != nil:
	case dir == nil:
		err = syscall.EBUSY
	case !all && len(n.children) > 0:
		err = syscall.ENOTEMPTY
	default:
		delete(dir.children, name)
	}
	return IOError(err, "remove", path)
}

// MkdirAll implements [System].
func (m *MemSystem) MkdirAll(path AbsPath, perm fs.FileMode) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return IOError(m.mkdirAll(path, perm), "create folder", path)
}

func (m *MemSystem) mkdirAll(path AbsPath, perm fs.FileMode) error {
	dir, name, n, err := m.walk(path, false)
	if errors.Is(err, fs.ErrNotExist) {
		if err := m.mkdirAll(path.Dir(), perm); err != nil {
			return err
		}
		dir, name, n, err = m.walk(path, false)
	}
	switch {
	case err != nil:
		return err
	case n == nil:
		dir.children[name] = &memNode{mode: fs.ModeDir | perm.Perm(), children: map[string]*memNode{}}
		return nil
	case n.mode.IsDir():
		return nil
	case n.isLink():
		// Like os.MkdirAll: a link to a folder will do, a dangling one is in the way.
		if t, err := m.find(path, true); err != nil {
			return syscall.EEXIST
		} else if t.mode.IsDir() {
			return nil
		}
	}
	return syscall.ENOTDIR
}

// Rename implements [System].
func (m *MemSystem) Rename(oldpath, newpath AbsPath) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	odir, oname, on, err := m.walk(oldpath, false)
	if err == nil && on == nil {
		err = syscall.ENOENT
	}
	var ndir *memNode
	var nname string
	var nn *memNode
	if err == nil {
		ndir, nname, nn, err = m.walk(newpath, false)
	}
	switch {
	case err != nil:
	case nn != nil && nn.mode.IsDir() && (on != nn || oldpath == newpath):
		err = syscall.EEXIST // os.Rename refuses an existing folder as the new path
	case on == nn:
		return nil
	case on.mode.IsDir() && nn != nil:
		err = syscall.ENOTDIR
	case on.mode.IsDir() && oldpath.Contains(newpath):
		err = syscall.EINVAL
	case odir == nil || ndir == nil:
		err = syscall.EBUSY
	default:
		delete(odir.children, oname)
		ndir.children[nname] = on
	}
	return IOError(err, "rename "+oldpath.String()+" to", newpath)
}

// Symlink implements [System].
func (m *MemSystem) Symlink(oldname string, newname AbsPath) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	dir, name, n, err := m.walk(newname, false)
	if err == nil && n != nil {
		err = syscall.EEXIST
	}
	if err == nil {
		dir.children[name] = &memNode{mode: fs.ModeSymlink | 0o777, link: oldname}
	}
	return IOError(err, "create link", newname)
}

// find returns the node at path, or ENOENT when there is none.
func (m *MemSystem) find(path AbsPath, follow bool) (*memNode, error) {
	_, _, n, err := m.walk(path, follow)
	if err == nil && n == nil {
		err = syscall.ENOENT
	}
	return n, err
}

// walk looks path up, following symlinks in its folders and, when follow is
// set, in its last element. It returns the folder holding the last element
// (nil for a root), the element's name and its node, which is nil when only
// the last element is missing. Errors are bare errnos, as the OS gives them.
func (m *MemSystem) walk(path AbsPath, follow bool) (*memNode, string, *memNode, error) {
	p := path
	for hops := 0; hops <= maxLinkHops; hops++ {
		vol, parts := splitPath(p)
		if m.roots[vol] == nil {
			m.roots[vol] = &memNode{mode: fs.ModeDir | 0o755, children: map[string]*memNode{}}
		}
		dir := m.roots[vol]
		if len(parts) == 0 {
			return nil, "", dir, nil
		}
		for i, name := range parts {
			n, last := dir.children[name], i == len(parts)-1
			if last && (n == nil || !(follow && n.isLink())) {
				return dir, name, n, nil
			}
			if n == nil {
				return nil, "", nil, syscall.ENOENT
			}
			if n.isLink() {
				target := n.link
				if !filepath.IsAbs(target) {
					held := vol + string(filepath.Separator) + filepath.Join(parts[:i]...)
					target = filepath.Join(held, target)
				}
				p = AbsPath(filepath.Join(append([]string{target}, parts[i+1:]...)...))
				break
			}
			if !n.mode.IsDir() {
				return nil, "", nil, syscall.ENOTDIR
			}
			dir = n
		}
	}
	return nil, "", nil, syscall.ELOOP
}

// splitPath splits path into its volume name and its elements.
func splitPath(path AbsPath) (string, []string) {
	vol := filepath.VolumeName(string(path))
	var parts []string
	for _, part := range strings.Split(string(path)[len(vol):], string(filepath.Separator)) {
		if part != "" {
			parts = append(parts, part)
		}
	}
	return vol, parts
}

func (n *memNode) isLink() bool { return n.mode&fs.ModeSymlink != 0 }

// info describes n as an entry called name.
func (n *memNode) info(name string) fs.FileInfo {
	size := int64(len(n.data))
	if n.isLink() {
		size = int64(len(n.link))
	}
	return fileInfo{name: name, size: size, mode: n.mode}
}

// fileInfo is the fs.FileInfo of a [memNode]; times are not modelled.
type fileInfo struct {
	name string
	size int64
	mode fs.FileMode
}

func (fi fileInfo) Name() string       { return fi.name }
func (fi fileInfo) Size() int64        { return fi.size }
func (fi fileInfo) Mode() fs.FileMode  { return fi.mode }
func (fi fileInfo) ModTime() time.Time { return time.Time{} }
func (fi fileInfo) IsDir() bool        { return fi.mode.IsDir() }
func (fi fileInfo) Sys() any           { return nil }
