//go:build !linux

package fsys

import "io/fs"

// createAnon makes nothing here: unnamed files (O_TMPFILE) are Linux's;
// a create goes through a temp name.
func createAnon(dir, path AbsPath, data []byte, perm fs.FileMode, fsync bool, placed *Placed) (done bool, err error) {
	return false, nil
}
