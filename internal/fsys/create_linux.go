package fsys

import (
	"errors"

	"golang.org/x/sys/unix"
)

// renameNoReplace renames tmp to path unless something is at path.
func renameNoReplace(tmp, path string) error {
	return unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, path, unix.RENAME_NOREPLACE)
}

func isENOTSUP(err error) bool {
	return errors.Is(err, unix.ENOTSUP) || errors.Is(err, unix.EOPNOTSUPP)
}
