package gitsource

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/agentpack/agentpack/engine/lockfile"
	"github.com/agentpack/agentpack/internal/fsys"
)

// maxLinkHops bounds symlink resolution, as Linux does.
const maxLinkHops = 40

// errOutside means a symlink leads out of the folder it was resolved in.
var errOutside = errors.New("leads outside the folder")

// hashTree is the manifest of every regular file under root, read through
// sys: [lockfile.HashDirOn], the one tree hash of lockfiles and checkouts.
func hashTree(sys fsys.System, root fsys.AbsPath) ([]lockfile.File, error) {
	return lockfile.HashDirOn(sys, root)
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
