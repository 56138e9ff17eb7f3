package fsys

import (
	"bytes"
	"io"
	"io/fs"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// DirFS is the read-only [fs.FS] of the folder root as a [System] sees it,
// for code written against io/fs (fs.WalkDir, fs.ReadFile). It answers as
// os.DirFS does: names are fs.ValidPath names relative to root, Open, Stat
// and ReadFile follow symlinks, and Lstat and ReadLink do not.
type DirFS struct {
	sys  System
	root AbsPath
}

var (
	_ fs.ReadFileFS = (*DirFS)(nil)
	_ fs.ReadDirFS  = (*DirFS)(nil)
	_ fs.StatFS     = (*DirFS)(nil)
	_ fs.ReadLinkFS = (*DirFS)(nil)
)

// NewDirFS returns the DirFS of root read through sys.
func NewDirFS(sys System, root AbsPath) *DirFS { return &DirFS{sys: sys, root: root} }

// path maps name to its absolute path, refusing what os.DirFS refuses.
func (d *DirFS) path(op, name string) (AbsPath, error) {
	if !fs.ValidPath(name) || runtime.GOOS == "windows" && strings.ContainsAny(name, `\:`) {
		return "", &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	if name == "." {
		return d.root, nil
	}
	// Not Join: a name may hold a backslash, an ordinary character on Unix.
	return AbsPath(filepath.Join(d.root.String(), filepath.FromSlash(name))), nil
}

// Open implements [fs.FS]. A file's bytes are read when it is opened.
func (d *DirFS) Open(name string) (fs.File, error) {
	p, err := d.path("open", name)
	if err != nil {
		return nil, err
	}
	fi, err := d.sys.Stat(p)
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		entries, err := d.sys.ReadDir(p)
		if err != nil {
			return nil, err
		}
		return &dirFSDir{info: fi, entries: entries}, nil
	}
	data, err := d.sys.ReadFile(p)
	if err != nil {
		return nil, err
	}
	return &dirFSFile{info: fi, Reader: bytes.NewReader(data)}, nil
}

// ReadFile implements [fs.ReadFileFS].
func (d *DirFS) ReadFile(name string) ([]byte, error) {
	p, err := d.path("read", name)
	if err != nil {
		return nil, err
	}
	return d.sys.ReadFile(p)
}

// ReadDir implements [fs.ReadDirFS].
func (d *DirFS) ReadDir(name string) ([]fs.DirEntry, error) {
	p, err := d.path("readdir", name)
	if err != nil {
		return nil, err
	}
	return d.sys.ReadDir(p)
}

// Stat implements [fs.StatFS].
func (d *DirFS) Stat(name string) (fs.FileInfo, error) {
	p, err := d.path("stat", name)
	if err != nil {
		return nil, err
	}
	return d.sys.Stat(p)
}

// Lstat implements [fs.ReadLinkFS].
func (d *DirFS) Lstat(name string) (fs.FileInfo, error) {
	p, err := d.path("lstat", name)
	if err != nil {
		return nil, err
	}
	return d.sys.Lstat(p)
}

// ReadLink implements [fs.ReadLinkFS].
func (d *DirFS) ReadLink(name string) (string, error) {
	p, err := d.path("readlink", name)
	if err != nil {
		return "", err
	}
	return d.sys.Readlink(p)
}

// dirFSFile is an open regular file of a [DirFS].
type dirFSFile struct {
	info fs.FileInfo
	*bytes.Reader
}

func (f *dirFSFile) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *dirFSFile) Close() error               { return nil }

// dirFSDir is an open folder of a [DirFS].
type dirFSDir struct {
	info    fs.FileInfo
	entries []fs.DirEntry
	offset  int
}

func (f *dirFSDir) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *dirFSDir) Close() error               { return nil }

func (f *dirFSDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: f.info.Name(), Err: fs.ErrInvalid}
}

// ReadDir implements [fs.ReadDirFile].
func (f *dirFSDir) ReadDir(n int) ([]fs.DirEntry, error) {
	rest := f.entries[f.offset:]
	if n <= 0 {
		f.offset = len(f.entries)
		return slices.Clone(rest), nil
	}
	if len(rest) == 0 {
		return nil, io.EOF
	}
	rest = rest[:min(n, len(rest))]
	f.offset += len(rest)
	return slices.Clone(rest), nil
}
