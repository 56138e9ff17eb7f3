package system

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/agentpack/agentpack/internal/apperr"
)

// TempPrefix starts the names of temp files that become target files.
const TempPrefix = ".agentpack-tmp-"

// Real reads and writes the real filesystem. Every write is a temp file
// in the destination directory followed by a rename, so a reader never sees a
// half-written file. Fsync is opt-in (AGENTPACK_FSYNC=1) because it costs
// seconds on large deploys and the journal already makes applies recoverable.
type Real struct {
	Fsync bool
	// AfterWrite, when set, runs after each successful write or remove; tests
	// use it to inject crashes.
	AfterWrite func(path string)
}

// ReadFile implements System.
func (s *Real) ReadFile(path string) ([]byte, error) { return os.ReadFile(path) }

// Lstat implements System.
func (s *Real) Lstat(path string) (fs.FileInfo, error) { return os.Lstat(path) }

// ReadDir implements System.
func (s *Real) ReadDir(path string) ([]fs.DirEntry, error) { return os.ReadDir(path) }

// WriteFile implements System.
func (s *Real) WriteFile(path string, data []byte, perm fs.FileMode) error {
	if err := refuseSymlink(path); err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return IOError(err, path)
	}
	// A short temp name: base+suffix could pass the 255-byte name limit.
	f, err := os.CreateTemp(dir, TempPrefix+"*")
	if err != nil {
		return IOError(err, path)
	}
	tmp := f.Name()
	cleanup := func(err error) error {
		_ = f.Close()
		_ = os.Remove(tmp)
		return IOError(err, path)
	}
	if _, err := f.Write(data); err != nil {
		return cleanup(err)
	}
	if err := f.Chmod(perm.Perm()); err != nil {
		return cleanup(err)
	}
	if s.Fsync {
		if err := f.Sync(); err != nil {
			return cleanup(err)
		}
	}
	if err := f.Close(); err != nil {
		return cleanup(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return IOError(err, path)
	}
	if s.Fsync {
		syncDir(dir)
	}
	if s.AfterWrite != nil {
		s.AfterWrite(path)
	}
	return nil
}

// Remove implements System.
func (s *Real) Remove(path string) error {
	err := os.Remove(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return IOError(err, path)
	}
	if s.Fsync {
		syncDir(filepath.Dir(path))
	}
	if s.AfterWrite != nil {
		s.AfterWrite(path)
	}
	return nil
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}

// refuseSymlink refuses to write through a symlink at path: agentpack
// replaces regular files only, never what a link points to.
func refuseSymlink(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return apperr.New(apperr.IOInvalidPath, "%s is a symlink; agentpack does not write through links", path).
			WithHint("remove the link or point the target option elsewhere").With("path", path)
	}
	if fi.IsDir() {
		return apperr.New(apperr.IOInvalidPath, "%s is a directory where a file should be", path).
			WithHint("move the directory away, then deploy again").With("path", path)
	}
	return nil
}
