package fsys

import (
	"io/fs"
	"path/filepath"
	"strings"
	"syscall"
)

// EvalSymlinks returns path with every symlink in it resolved through sys,
// as filepath.EvalSymlinks does on the real disk, so a dry run or a
// MemSystem resolves links the way a deploy would. Relative link targets
// are taken from the folder holding the link and ".." from the path
// resolved so far. A dangling link is an error matching fs.ErrNotExist and
// a path through more than 40 links one matching syscall.ELOOP.
func EvalSymlinks(sys System, path AbsPath) (AbsPath, error) {
	vol := filepath.VolumeName(string(path))
	resolved := AbsPath(vol + string(filepath.Separator))
	todo := splitNames(string(path)[len(vol):])
	for hops := 0; len(todo) > 0; {
		name := todo[0]
		todo = todo[1:]
		switch {
		case name == ".":
			continue
		case name == "..":
			resolved = resolved.Dir()
			continue
		case strings.ContainsRune(name, 0):
			return "", IOError(syscall.EINVAL, "resolve", path)
		}
		cur := resolved.JoinName(name)
		fi, err := sys.Lstat(cur)
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			resolved = cur
			continue
		}
		if hops++; hops > maxLinkHops {
			return "", IOError(syscall.ELOOP, "resolve", path)
		}
		target, err := sys.Readlink(cur)
		if err != nil {
			return "", err
		}
		if target == "" {
			return "", IOError(syscall.ENOENT, "resolve", path)
		}
		if filepath.IsAbs(target) {
			v := filepath.VolumeName(target)
			resolved, target = AbsPath(v+string(filepath.Separator)), target[len(v):]
		}
		todo = append(splitNames(target), todo...)
	}
	return resolved, nil
}

// splitNames splits an OS path into its non-empty elements.
func splitNames(p string) []string {
	return strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == filepath.Separator })
}
