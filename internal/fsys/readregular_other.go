//go:build !linux

package fsys

import (
	"io/fs"
	"os"
)

// readRegular is an Lstat and, for a regular file, a read where the raw
// open-and-fstat path is not used. fi is nil when the error is about
// finding path, set when it is about reading it.
func readRegular(path string, _ []byte) ([]byte, fs.FileInfo, error) {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return nil, fi, err
	}
	data, err := readFile(path)
	return data, fi, err
}

// compactExtra has nothing to add where readRegular uses os.Lstat.
func compactExtra(fs.FileInfo) (ctime int64, ino uint64, ok bool) { return 0, 0, false }

// readFit reads nothing where readRegular has no raw path: the caller
// reads as it otherwise would.
func readFit(string, []byte) ([]byte, bool) { return nil, false }
