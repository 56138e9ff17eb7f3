package gitsource

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/agentpack/agentpack/engine/lockfile"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/agentpack/agentpack/internal/workers"
)

// maxLinkHops bounds symlink resolution, as Linux does.
const maxLinkHops = 40

// errOutside means a symlink leads out of the folder it was resolved in.
var errOutside = errors.New("leads outside the folder")

// hashTree is [lockfile.HashDir] read through sys: the manifest of every
// regular file under root, or of root itself when it is a file. Entries
// named .git are skipped at any depth and [MarkerFile] at the root; a
// symlink to a file inside root is hashed by its content, one to a folder
// inside root is skipped, and any other symlink or special file is an error.
func hashTree(sys fsys.System, root fsys.AbsPath) ([]lockfile.File, error) {
	fi, err := sys.Stat(root)
	if err != nil {
		return nil, err
	}
	if fi.Mode().IsRegular() {
		f, err := hashFile(sys, root)
		f.Path = root.Base()
		return []lockfile.File{f}, err
	}
	if !fi.IsDir() {
		return nil, apperr.New(apperr.IOInvalidPath, "%s is neither a file nor a folder", root).With("path", root.String())
	}
	var jobs []hashJob
	if err := listTree(sys, root, root, "", &jobs); err != nil {
		return nil, err
	}
	files := make([]lockfile.File, len(jobs))
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
	slices.SortFunc(files, func(a, b lockfile.File) int { return strings.Compare(a.Path, b.Path) })
	return files, nil
}

// hashJob is one file to hash: its manifest path and where to read it.
type hashJob struct {
	rel string
	abs fsys.AbsPath
}

// listTree appends to jobs the files to hash in dir, which is rel below
// root ("" for root itself).
func listTree(sys fsys.System, root, dir fsys.AbsPath, rel string, jobs *[]hashJob) error {
	entries, err := sys.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		p, child := dir.JoinName(e.Name()), e.Name()
		if rel != "" {
			child = rel + "/" + child
		}
		if e.Name() == ".git" || child == MarkerFile {
			continue
		}
		switch t := e.Type(); {
		case t.IsDir():
			if err := listTree(sys, root, p, child, jobs); err != nil {
				return err
			}
		case t.IsRegular():
			*jobs = append(*jobs, hashJob{child, p})
		case t&fs.ModeSymlink != 0:
			follow, err := checkLink(sys, root, p, child)
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

// checkLink reports whether the symlink p, rel below root, should be hashed (it
// leads to a regular file inside root) or skipped (to a folder inside root),
// and fails for anything else.
func checkLink(sys fsys.System, root, p fsys.AbsPath, rel string) (bool, error) {
	fi, err := evalBelow(sys, root, rel)
	switch {
	case errors.Is(err, errOutside):
		return false, apperr.New(apperr.IOInvalidPath, "symlink %s points outside %s", p, root).With("path", p.String())
	case err != nil:
		return false, apperr.Wrap(err, apperr.IOInvalidPath, "dangling symlink %s", p).With("path", p.String())
	case fi.Mode().IsRegular():
		return true, nil
	case fi.IsDir():
		return false, nil
	}
	return false, apperr.New(apperr.IOInvalidPath, "symlink %s points to a special file", p).With("path", p.String())
}

// hashFile hashes the file at p, following symlinks.
func hashFile(sys fsys.System, p fsys.AbsPath) (lockfile.File, error) {
	data, err := sys.ReadFile(p)
	if err != nil {
		return lockfile.File{}, err
	}
	sum := sha256.Sum256(data)
	return lockfile.File{SHA256: hex.EncodeToString(sum[:]), Bytes: int64(len(data))}, nil
}

// evalBelow resolves the '/'-separated path rel below root through sys, as
// filepath.EvalSymlinks would, and describes what it leads to. It fails with
// [errOutside] when an absolute link target or a ".." would leave root, even
// if a later element came back in, and with an error matching
// fs.ErrNotExist when the path dangles.
func evalBelow(sys fsys.System, root fsys.AbsPath, rel string) (fs.FileInfo, error) {
	var done []string
	todo := strings.Split(rel, "/")
	for hops := 0; len(todo) > 0; {
		name := todo[0]
		todo = todo[1:]
		switch {
		case name == "" || name == ".":
			continue
		case name == "..":
			if len(done) == 0 {
				return nil, errOutside
			}
			done = done[:len(done)-1]
			continue
		case strings.ContainsAny(name, "\x00"+string(filepath.Separator)):
			return nil, syscall.EINVAL
		}
		cur := joinNames(root, done).JoinName(name)
		fi, err := sys.Lstat(cur)
		if err != nil {
			return nil, err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			done = append(done, name)
			continue
		}
		if hops++; hops > maxLinkHops {
			return nil, syscall.ELOOP
		}
		target, err := sys.Readlink(cur)
		if err != nil {
			return nil, err
		}
		target = filepath.ToSlash(target)
		if target == "" || strings.HasPrefix(target, "/") || filepath.IsAbs(filepath.FromSlash(target)) {
			return nil, errOutside
		}
		todo = append(strings.Split(target, "/"), todo...)
	}
	// No element below root is a link any more; root itself may be one.
	return sys.Stat(joinNames(root, done))
}

// joinNames returns the path names leads to below dir.
func joinNames(dir fsys.AbsPath, names []string) fsys.AbsPath {
	for _, n := range names {
		dir = dir.JoinName(n)
	}
	return dir
}
