//go:build !unix

package fsys

import (
	"io/fs"
	"os"
)

// writeAtomic is [writeAtomicPortable] where raw system calls are not used.
func writeAtomic(dir, path AbsPath, data []byte, perm fs.FileMode, fsync bool, place func(tmp, path string) error) error {
	return writeAtomicPortable(dir, path, data, perm, fsync, place)
}

// readFile is os.ReadFile where raw system calls are not used.
func readFile(path string) ([]byte, error) { return os.ReadFile(path) }
