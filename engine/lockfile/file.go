package lockfile

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"slices"
	"strconv"
	"strings"

	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/agentpack/agentpack/internal/workers"
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

// HashDir is [HashDirOn] on the real disk. A relative dir is resolved
// against the working directory.
func HashDir(dir string) ([]File, error) {
	p, err := absPath(dir)
	if err != nil {
		return nil, err
	}
	return HashDirOn(diskSystem, p)
}

// HashDirOn hashes a module read through sys: every regular file under dir,
// or dir itself when it is a single file (then the one entry is named after
// its base name).
//
// Entries named .git are skipped at any depth, as is [TreeMarker] at the
// root. A symlink to a regular file inside dir is hashed by its content (as
// the original tool does); a symlink to a directory is not followed; a
// symlink that dangles or leads outside dir, and any special file, is an
// error. Links are resolved with [fsys.EvalSymlinks], so dir itself may be
// a link. Files are hashed in parallel and the result is sorted by path.
func HashDirOn(sys fsys.System, dir fsys.AbsPath) ([]File, error) {
	info, err := sys.Stat(dir)
	if err != nil {
		return nil, ioErr(err, dir)
	}
	if info.Mode().IsRegular() {
		f, err := hashFile(sys, dir)
		if err != nil {
			return nil, err
		}
		f.Path = dir.Base()
		return []File{f}, nil
	}
	if !info.IsDir() {
		return nil, apperr.New(apperr.IOInvalidPath, "%s is neither a file nor a folder", dir).With("path", dir.String())
	}
	// Walk the resolved root, so that links are judged against where the
	// files really are.
	realRoot, err := fsys.EvalSymlinks(sys, dir)
	if err != nil {
		return nil, ioErr(err, dir)
	}
	var jobs []hashJob
	if err := listFiles(sys, realRoot, realRoot, "", &jobs); err != nil {
		return nil, err
	}
	files, err := hashAll(sys, jobs)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	return files, nil
}

// hashJob is one file to hash: its manifest path and where to read it.
type hashJob struct {
	rel string
	abs fsys.AbsPath
}

// listFiles appends to jobs the files to hash in dir, which is rel below
// realRoot ("" for realRoot itself), in lexical order.
func listFiles(sys fsys.System, realRoot, dir fsys.AbsPath, rel string, jobs *[]hashJob) error {
	entries, err := sys.ReadDir(dir)
	if err != nil {
		return ioErr(err, dir)
	}
	for _, d := range entries {
		p, child := dir.JoinName(d.Name()), d.Name()
		if rel != "" {
			child = rel + "/" + child
		}
		if d.Name() == ".git" || child == TreeMarker {
			continue
		}
		switch t := d.Type(); {
		case t.IsDir():
			if err := listFiles(sys, realRoot, p, child, jobs); err != nil {
				return err
			}
		case t.IsRegular():
			*jobs = append(*jobs, hashJob{child, p})
		case t&fs.ModeSymlink != 0:
			follow, err := checkSymlink(sys, realRoot, p)
			if err != nil {
				return err
			}
			if follow {
				*jobs = append(*jobs, hashJob{child, p})
			}
		default:
			return apperr.New(apperr.IOInvalidPath, "cannot hash special file %s", p).With("path", p.String())
		}
	}
	return nil
}

// checkSymlink reports whether the symlink p should be hashed (it leads to a
// regular file inside realRoot) or skipped (it leads to a folder inside
// realRoot), and fails for anything else.
func checkSymlink(sys fsys.System, realRoot, p fsys.AbsPath) (bool, error) {
	target, err := fsys.EvalSymlinks(sys, p)
	if err != nil {
		return false, apperr.Wrap(err, apperr.IOInvalidPath, "dangling symlink %s", p).With("path", p.String())
	}
	if !realRoot.Contains(target) {
		return false, apperr.New(apperr.IOInvalidPath, "symlink %s points outside %s", p, realRoot).With("path", p.String())
	}
	info, err := sys.Stat(target)
	if err != nil {
		return false, ioErr(err, p)
	}
	switch {
	case info.Mode().IsRegular():
		return true, nil
	case info.IsDir():
		return false, nil
	default:
		return false, apperr.New(apperr.IOInvalidPath, "symlink %s points to a special file", p).With("path", p.String())
	}
}

// hashAll hashes jobs on a few workers and returns the first error.
func hashAll(sys fsys.System, jobs []hashJob) ([]File, error) {
	files := make([]File, len(jobs))
	errs := make([]error, len(jobs))
	workers.Parallel(len(jobs), func(i int) {
		files[i], errs[i] = hashFile(sys, jobs[i].abs)
		files[i].Path = jobs[i].rel
	})
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return files, nil
}

// hashFile hashes the file at p, following symlinks.
func hashFile(sys fsys.System, p fsys.AbsPath) (File, error) {
	data, err := sys.ReadFile(p)
	if err != nil {
		return File{}, ioErr(err, p)
	}
	sum := sha256.Sum256(data)
	return File{SHA256: hex.EncodeToString(sum[:]), Bytes: int64(len(data))}, nil
}

// ioErr returns err, from a System, as it is when it carries an apperr
// code, and as E_IO_FAILED (or E_IO_PERMISSION_DENIED) naming p otherwise.
func ioErr(err error, p fsys.AbsPath) error {
	var ae *apperr.Error
	if errors.As(err, &ae) {
		return err
	}
	code := apperr.IOFailed
	if errors.Is(err, fs.ErrPermission) {
		code = apperr.IOPermissionDenied
	}
	return apperr.Wrap(err, code, "hash %s", p).With("path", p.String())
}
