package lockfile

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/agentpack/agentpack/internal/apperr"
)

// TreeMarker is the name of the marker file the git cache writes at the root
// of every checkout. [HashDir] never hashes a file with this name at the
// root it walks, so a module at the root of a checkout hashes the same as the
// repository's own files.
const TreeMarker = ".agentpack-tree.json"

// File is one entry of a module's file manifest.
type File struct {
	// Path is relative to the module root and uses '/' separators.
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	Bytes  int64  `json:"bytes"`
}

// ModuleHash returns the module checksum the original tool computes: the hex
// SHA-256 of "<path>\n<sha256>\n<bytes>\n" for every file, in byte order of
// path. The files are sorted first, so the input order does not matter.
func ModuleHash(files []File) string {
	h := sha256.New()
	for _, f := range SortFiles(files) {
		io.WriteString(h, f.Path)
		io.WriteString(h, "\n")
		io.WriteString(h, f.SHA256)
		io.WriteString(h, "\n")
		io.WriteString(h, strconv.FormatInt(f.Bytes, 10))
		io.WriteString(h, "\n")
	}
	return hex.EncodeToString(h.Sum(nil))
}

// SortFiles returns a copy of files sorted by path (never nil).
func SortFiles(files []File) []File {
	out := make([]File, len(files))
	copy(out, files)
	slices.SortFunc(out, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// HashDir hashes a module: every regular file under dir, or dir itself when
// it is a single file (then the one entry is named after its base name).
//
// Entries named .git are skipped at any depth, as is [TreeMarker] at the
// root. A symlink to a regular file inside dir is hashed by its content (as
// the original tool does); a symlink to a directory is not followed; a
// symlink that dangles or leads outside dir, and any special file, is an
// error. Files are hashed in parallel, at most GOMAXPROCS at a time, and the
// result is sorted by path.
func HashDir(dir string) ([]File, error) {
	info, err := os.Stat(dir)
	if err != nil {
		return nil, ioErr(err, dir)
	}
	if info.Mode().IsRegular() {
		f, err := hashFile(dir, make([]byte, 64<<10))
		if err != nil {
			return nil, err
		}
		f.Path = filepath.Base(dir)
		return []File{f}, nil
	}
	if !info.IsDir() {
		return nil, apperr.New(apperr.IOInvalidPath, "%s is neither a file nor a folder", dir).With("path", dir)
	}
	jobs, err := listFiles(dir)
	if err != nil {
		return nil, err
	}
	files, err := hashAll(jobs)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	return files, nil
}

// hashJob is one file to hash: its manifest path and where to read it.
type hashJob struct{ rel, abs string }

func listFiles(root string) ([]hashJob, error) {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, ioErr(err, root)
	}
	var jobs []hashJob
	// Walk the resolved root: WalkDir does not descend into a root that is
	// itself a symlink.
	err = filepath.WalkDir(realRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return ioErr(err, p)
		}
		if p == realRoot {
			return nil
		}
		if d.Name() == ".git" {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(realRoot, p)
		if err != nil {
			return ioErr(err, p)
		}
		rel = filepath.ToSlash(rel)
		if rel == TreeMarker {
			return nil
		}
		switch t := d.Type(); {
		case t.IsDir():
			return nil
		case t.IsRegular():
			jobs = append(jobs, hashJob{rel, p})
			return nil
		case t&fs.ModeSymlink != 0:
			follow, err := checkSymlink(realRoot, p)
			if err != nil {
				return err
			}
			if follow {
				jobs = append(jobs, hashJob{rel, p})
			}
			return nil
		default:
			return apperr.New(apperr.IOInvalidPath, "cannot hash special file %s", p).With("path", p)
		}
	})
	return jobs, err
}

// checkSymlink reports whether the symlink p should be hashed (it leads to a
// regular file inside realRoot) or skipped (it leads to a folder inside
// realRoot), and fails for anything else.
func checkSymlink(realRoot, p string) (bool, error) {
	target, err := filepath.EvalSymlinks(p)
	if err != nil {
		return false, apperr.Wrap(err, apperr.IOInvalidPath, "dangling symlink %s", p).With("path", p)
	}
	if rel, err := filepath.Rel(realRoot, target); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return false, apperr.New(apperr.IOInvalidPath, "symlink %s points outside %s", p, realRoot).With("path", p)
	}
	info, err := os.Stat(target)
	if err != nil {
		return false, ioErr(err, p)
	}
	switch {
	case info.Mode().IsRegular():
		return true, nil
	case info.IsDir():
		return false, nil
	default:
		return false, apperr.New(apperr.IOInvalidPath, "symlink %s points to a special file", p).With("path", p)
	}
}

// hashAll hashes jobs on GOMAXPROCS workers and returns the first error.
func hashAll(jobs []hashJob) ([]File, error) {
	files := make([]File, len(jobs))
	errs := make([]error, len(jobs))
	workers := min(runtime.GOMAXPROCS(0), len(jobs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			buf := make([]byte, 64<<10)
			for i := range next {
				f, err := hashFile(jobs[i].abs, buf)
				f.Path = jobs[i].rel
				files[i], errs[i] = f, err
			}
		})
	}
	for i := range jobs {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return files, nil
}

// hashFile hashes the file at p using buf, one per worker (hiding
// os.File's WriteTo, which would allocate a fresh buffer per file).
func hashFile(p string, buf []byte) (File, error) {
	f, err := os.Open(p)
	if err != nil {
		return File{}, ioErr(err, p)
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.CopyBuffer(h, struct{ io.Reader }{f}, buf)
	if err != nil {
		return File{}, ioErr(err, p)
	}
	return File{SHA256: hex.EncodeToString(h.Sum(nil)), Bytes: n}, nil
}

func ioErr(err error, p string) error {
	var ae *apperr.Error
	if errors.As(err, &ae) {
		return err
	}
	code := apperr.IOFailed
	if errors.Is(err, fs.ErrPermission) {
		code = apperr.IOPermissionDenied
	}
	return apperr.Wrap(err, code, "hash %s", p).With("path", p)
}
