package gitsource

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/go-git/go-billy/v5"

	"github.com/agentpack/agentpack/internal/fsys"
)

// billyFS is a read-only billy.Filesystem over an [fsys.System], rooted at
// a folder. It lets go-git read a local repository (the in-process file://
// server) while every byte still goes through the System. Files are read
// whole and kept for the life of the billyFS, because go-git reopens a pack
// file for every object it looks up; one billyFS serves one session, so it
// sees one snapshot of the repository.
type billyFS struct {
	sys  fsys.System
	root fsys.AbsPath

	mu    sync.Mutex
	files map[fsys.AbsPath][]byte
}

// newBillyFS returns a read-only billyFS showing root.
func newBillyFS(sys fsys.System, root fsys.AbsPath) *billyFS {
	return &billyFS{sys: sys, root: root, files: map[fsys.AbsPath][]byte{}}
}

// abs maps a billy name (relative to the root, either separator) to an
// absolute path, refusing names that climb out of the root.
func (b *billyFS) abs(op, name string) (fsys.AbsPath, error) {
	p := fsys.AbsPath(filepath.Join(b.root.String(), filepath.FromSlash(name)))
	if !b.root.Contains(p) {
		return "", &fs.PathError{Op: op, Path: name, Err: billy.ErrCrossedBoundary}
	}
	return p, nil
}

// osError returns err from sys so that os.IsNotExist and friends, which
// go-git uses and which look only inside *fs.PathError, recognise it.
func osError(err error, op, name string) error {
	for _, target := range []error{fs.ErrNotExist, fs.ErrExist, fs.ErrPermission} {
		if errors.Is(err, target) {
			return &fs.PathError{Op: op, Path: name, Err: target}
		}
	}
	return err
}

// readOnly is the error of every mutation.
func readOnly(op, name string) error {
	return &fs.PathError{Op: op, Path: name, Err: billy.ErrReadOnly}
}

// Capabilities implements billy.Capable.
func (b *billyFS) Capabilities() billy.Capability {
	return billy.ReadCapability | billy.SeekCapability
}

// Open implements billy.Basic.
func (b *billyFS) Open(name string) (billy.File, error) {
	return b.OpenFile(name, os.O_RDONLY, 0)
}

// OpenFile implements billy.Basic; it opens files for reading only.
func (b *billyFS) OpenFile(name string, flag int, _ os.FileMode) (billy.File, error) {
	if flag&(os.O_WRONLY|os.O_RDWR|os.O_CREATE|os.O_TRUNC|os.O_APPEND) != 0 {
		return nil, readOnly("open", name)
	}
	p, err := b.abs("open", name)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	data, ok := b.files[p]
	b.mu.Unlock()
	if !ok {
		if data, err = b.sys.ReadFile(p); err != nil {
			return nil, osError(err, "open", name)
		}
		b.mu.Lock()
		b.files[p] = data
		b.mu.Unlock()
	}
	return &billyFile{name: name, Reader: bytes.NewReader(data)}, nil
}

// Stat implements billy.Basic.
func (b *billyFS) Stat(name string) (os.FileInfo, error) {
	p, err := b.abs("stat", name)
	if err != nil {
		return nil, err
	}
	fi, err := b.sys.Stat(p)
	return fi, osError(err, "stat", name)
}

// Lstat implements billy.Symlink.
func (b *billyFS) Lstat(name string) (os.FileInfo, error) {
	p, err := b.abs("lstat", name)
	if err != nil {
		return nil, err
	}
	fi, err := b.sys.Lstat(p)
	return fi, osError(err, "lstat", name)
}

// Readlink implements billy.Symlink.
func (b *billyFS) Readlink(name string) (string, error) {
	p, err := b.abs("readlink", name)
	if err != nil {
		return "", err
	}
	target, err := b.sys.Readlink(p)
	return target, osError(err, "readlink", name)
}

// ReadDir implements billy.Dir.
func (b *billyFS) ReadDir(name string) ([]os.FileInfo, error) {
	p, err := b.abs("readdir", name)
	if err != nil {
		return nil, err
	}
	entries, err := b.sys.ReadDir(p)
	if err != nil {
		return nil, osError(err, "readdir", name)
	}
	infos := make([]os.FileInfo, 0, len(entries))
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil {
			return nil, fsys.IOError(err, "stat", p.JoinName(e.Name()))
		}
		infos = append(infos, fi)
	}
	return infos, nil
}

// Join implements billy.Basic.
func (b *billyFS) Join(elem ...string) string { return filepath.Join(elem...) }

// Chroot implements billy.Chroot.
func (b *billyFS) Chroot(name string) (billy.Filesystem, error) {
	p, err := b.abs("chroot", name)
	if err != nil {
		return nil, err
	}
	return newBillyFS(b.sys, p), nil
}

// Root implements billy.Chroot.
func (b *billyFS) Root() string { return b.root.String() }

// Create implements billy.Basic; the filesystem is read-only.
func (b *billyFS) Create(name string) (billy.File, error) { return nil, readOnly("create", name) }

// TempFile implements billy.TempFile; the filesystem is read-only.
func (b *billyFS) TempFile(dir, _ string) (billy.File, error) { return nil, readOnly("tempfile", dir) }

// Rename implements billy.Basic; the filesystem is read-only.
func (b *billyFS) Rename(from, _ string) error { return readOnly("rename", from) }

// Remove implements billy.Basic; the filesystem is read-only.
func (b *billyFS) Remove(name string) error { return readOnly("remove", name) }

// MkdirAll implements billy.Dir; the filesystem is read-only.
func (b *billyFS) MkdirAll(name string, _ os.FileMode) error { return readOnly("mkdir", name) }

// Symlink implements billy.Symlink; the filesystem is read-only.
func (b *billyFS) Symlink(_, link string) error { return readOnly("symlink", link) }

// billyFile is a file of a [billyFS]: its bytes, read at open.
type billyFile struct {
	name string
	*bytes.Reader
}

// Name implements billy.File.
func (f *billyFile) Name() string { return f.name }

// Write implements billy.File; the file is read-only.
func (f *billyFile) Write([]byte) (int, error) { return 0, readOnly("write", f.name) }

// Truncate implements billy.File; the file is read-only.
func (f *billyFile) Truncate(int64) error { return readOnly("truncate", f.name) }

// Lock implements billy.File; a snapshot needs no lock.
func (f *billyFile) Lock() error { return nil }

// Unlock implements billy.File.
func (f *billyFile) Unlock() error { return nil }

// Close implements billy.File.
func (f *billyFile) Close() error { return nil }
