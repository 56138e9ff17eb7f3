package fsys

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"

	"github.com/agentpack/agentpack/internal/apperr"
)

// TempPrefix starts the names of the temp files [RealSystem.WriteFile]
// renames into place, so cleanup and status can recognise leftovers.
const TempPrefix = ".agentpack-tmp-"

// RealSystemOptions configures a [RealSystem].
type RealSystemOptions struct {
	// Fsync makes every mutation durable before it returns. It is opt-in
	// because it costs seconds on large deploys and the journal already
	// makes applies recoverable after a crash.
	Fsync bool
	// AfterWrite, when set, runs after each successful mutation with the
	// path it changed; tests use it to inject crashes.
	AfterWrite func(AbsPath)
}

// RealSystem reads and writes the real filesystem. It holds the one atomic
// write in agentpack.
type RealSystem struct {
	opts RealSystemOptions
	// dirty, in a [RealSystem.Batched] copy, collects the folders changed
	// until its barrier flushes them.
	dirty *dirtyDirs
}

// NewRealSystem returns a RealSystem configured by opts.
func NewRealSystem(opts RealSystemOptions) *RealSystem { return &RealSystem{opts: opts} }

// SetAfterWrite replaces the [RealSystemOptions.AfterWrite] hook. Crash
// tests install it on the System an engine already holds; call it before
// the System is used.
func (s *RealSystem) SetAfterWrite(fn func(AbsPath)) { s.opts.AfterWrite = fn }

// ReadFile implements [System].
func (s *RealSystem) ReadFile(path AbsPath) ([]byte, error) {
	data, err := readFile(string(path))
	return data, IOError(err, "read", path)
}

// Lstat implements [System].
func (s *RealSystem) Lstat(path AbsPath) (fs.FileInfo, error) {
	fi, err := os.Lstat(string(path))
	return fi, statError(err, path)
}

// Stat implements [System].
func (s *RealSystem) Stat(path AbsPath) (fs.FileInfo, error) {
	fi, err := os.Stat(string(path))
	return fi, statError(err, path)
}

// ReadDir implements [System].
func (s *RealSystem) ReadDir(path AbsPath) ([]fs.DirEntry, error) {
	entries, err := os.ReadDir(string(path))
	return entries, IOError(err, "list", path)
}

// Readlink implements [System].
func (s *RealSystem) Readlink(path AbsPath) (string, error) {
	target, err := os.Readlink(string(path))
	return target, IOError(err, "read link", path)
}

// WriteFile implements [System]: it writes a temp file in the destination
// folder, sets its mode, optionally fsyncs it, renames it over path and
// optionally fsyncs the folder. A reader sees the old file or the new one,
// never half of one. renameio is not used because it always fsyncs and names
// the temp file after path, which can pass the 255-byte name limit.
func (s *RealSystem) WriteFile(path AbsPath, data []byte, perm fs.FileMode) error {
	return s.write(path, data, perm, false, nil)
}

// CreateFile implements [Creator]: [RealSystem.WriteFile] whose last step
// fails where anything is at path by then — the link that names an
// unnamed file on Linux ([createAnon]), else [placeNew].
func (s *RealSystem) CreateFile(path AbsPath, data []byte, perm fs.FileMode) error {
	return s.write(path, data, perm, true, nil)
}

// WriteFileStat implements [StatWriter].
func (s *RealSystem) WriteFileStat(path AbsPath, data []byte, perm fs.FileMode, create bool) (Placed, error) {
	var placed Placed
	err := s.write(path, data, perm, create, &placed)
	return placed, err
}

// write is WriteFile, or CreateFile when create is set, telling placed
// (when set) what it placed.
func (s *RealSystem) write(path AbsPath, data []byte, perm fs.FileMode, create bool, placed *Placed) error {
	dir := path.Dir()
	place, op := placeNew, "create"
	if !create {
		if fi, err := os.Lstat(string(path)); err == nil {
			if err := refuseNonFile(path, fi.Mode()); err != nil {
				return err
			}
		}
		place, op = replaceFile, "write"
	}
	if create {
		if done, err := createAnon(dir, path, data, perm.Perm(), s.opts.Fsync, placed); done {
			if err != nil {
				return IOError(err, op, path)
			}
			return s.done(path, dir)
		}
	}
	if err := writeAtomic(dir, path, data, perm.Perm(), s.opts.Fsync, place, placed); err != nil {
		return IOError(err, op, path)
	}
	return s.done(path, dir)
}

// Remove implements [System].
func (s *RealSystem) Remove(path AbsPath) error {
	if err := os.Remove(string(path)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return IOError(err, "remove", path)
	}
	return s.done(path, path.Dir())
}

// RemoveAll implements [System].
func (s *RealSystem) RemoveAll(path AbsPath) error {
	if err := os.RemoveAll(string(path)); err != nil {
		return IOError(err, "remove", path)
	}
	return s.done(path, path.Dir())
}

// MkdirAll implements [System].
func (s *RealSystem) MkdirAll(path AbsPath, perm fs.FileMode) error {
	if err := os.MkdirAll(string(path), perm); err != nil {
		return IOError(err, "create folder", path)
	}
	return s.done(path, path.Dir())
}

// Rename implements [System].
func (s *RealSystem) Rename(oldpath, newpath AbsPath) error {
	if err := os.Rename(string(oldpath), string(newpath)); err != nil {
		return IOError(err, "rename "+oldpath.String()+" to", newpath)
	}
	if s.opts.Fsync && oldpath.Dir() != newpath.Dir() {
		if err := SyncDir(oldpath.Dir()); err != nil {
			return err
		}
	}
	if s.dirty != nil {
		s.dirty.add(oldpath.Dir())
	}
	return s.done(newpath, newpath.Dir())
}

// Symlink implements [System].
func (s *RealSystem) Symlink(oldname string, newname AbsPath) error {
	if err := os.Symlink(oldname, string(newname)); err != nil {
		return IOError(err, "create link", newname)
	}
	return s.done(newname, newname.Dir())
}

// done finishes a successful mutation of path: with Fsync it makes the
// change to dir durable (batched: it notes dir for the barrier), then it runs the AfterWrite hook. A missing dir is
// fine: removing a path that never existed changed nothing there.
func (s *RealSystem) done(path, dir AbsPath) error {
	if s.dirty != nil {
		s.dirty.add(dir)
	}
	if s.opts.Fsync {
		if err := SyncDir(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	if s.opts.AfterWrite != nil {
		s.opts.AfterWrite(path)
	}
	return nil
}

// SyncDir fsyncs the folder dir so that a rename, creation or removal inside
// it survives a power loss. It does nothing on Windows, which cannot fsync a
// folder handle.
func SyncDir(dir AbsPath) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(string(dir))
	if err != nil {
		return IOError(err, "sync", dir)
	}
	defer d.Close()
	return IOError(d.Sync(), "sync", dir)
}

// refuseNonFile refuses to write where path, whose current type is mode, is
// a symlink or a folder: agentpack replaces regular files only, never what a
// link points to.
func refuseNonFile(path AbsPath, mode fs.FileMode) error {
	switch {
	case mode&fs.ModeSymlink != 0:
		return apperr.New(apperr.IOInvalidPath, "%s is a symlink; agentpack does not write through links", path).
			WithHint("remove the link or point the target elsewhere").With("path", path.String())
	case mode.IsDir():
		return apperr.New(apperr.IOInvalidPath, "%s is a folder where a file should be", path).
			WithHint("move the folder away, then deploy again").With("path", path.String())
	}
	return nil
}

// writeAtomicPortable is the atomic write with the os package: a temp file
// in dir, its mode, an optional fsync, and a rename over path.
func writeAtomicPortable(dir, path AbsPath, data []byte, perm fs.FileMode, fsync bool, place func(tmp, path string) error) error {
	if err := os.MkdirAll(string(dir), 0o755); err != nil {
		return err
	}
	return viaTemp(dir, path, perm, fsync, place, nil, func(f *os.File) error {
		_, err := f.Write(data)
		return err
	})
}

// replaceViaTemp fills a new temp file in dir, gives it perm, fsyncs it when
// asked, and renames it over path; on any failure the temp file is removed
// and path is left as it was.
func replaceViaTemp(dir, path AbsPath, perm fs.FileMode, fsync bool, placed *Placed, fill func(*os.File) error) error {
	return viaTemp(dir, path, perm, fsync, replaceFile, placed, fill)
}

// viaTemp is [replaceViaTemp] with place moving the temp file to path.
// When placed is set, it is told what was placed ([placedAfter]).
func viaTemp(dir, path AbsPath, perm fs.FileMode, fsync bool, place func(tmp, path string) error, placed *Placed, fill func(*os.File) error) error {
	f, err := os.CreateTemp(string(dir), TempPrefix+"*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	err = fill(f)
	if err == nil {
		err = f.Chmod(perm)
	}
	if err == nil && fsync {
		err = f.Sync()
	}
	var before fs.FileInfo
	if err == nil && placed != nil {
		before, err = f.Stat()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = place(tmp, string(path))
	}
	if err != nil {
		_ = os.Remove(tmp)
		return err
	}
	if placed != nil {
		*placed = placedAfter(before, string(path))
	}
	return nil
}

// tempName is a fresh temp file name in dir.
func tempName(dir AbsPath, n uint64) string {
	return filepath.Join(string(dir), fmt.Sprintf("%s%016x", TempPrefix, n))
}
