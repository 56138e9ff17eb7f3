//go:build !unix

package fsys

import (
	"io/fs"
	"os"
)

// writeAtomic is [writeAtomicPortable] where raw system calls are not used.
// It cannot tell what it placed: placed is left as it is.
func writeAtomic(dir, path AbsPath, data []byte, perm fs.FileMode, fsync bool, place func(tmp, path string) error, placed *Placed) error {
	return writeAtomicPortable(dir, path, data, perm, fsync, place)
}

// readFile is os.ReadFile where raw system calls are not used.
func readFile(path string) ([]byte, error) { return os.ReadFile(path) }

// readRange is [readRangePortable] where raw system calls are not used.
func readRange(path string, off, n int64) ([]byte, error) { return readRangePortable(path, off, n) }

// readRangeInto is [readRangeIntoPortable] where raw system calls are not
// used.
func readRangeInto(path string, off int64, buf []byte) error {
	return readRangeIntoPortable(path, off, buf)
}

// replaceFile renames the complete temp file tmp over path.
func replaceFile(tmp, path string) error { return os.Rename(tmp, path) }
