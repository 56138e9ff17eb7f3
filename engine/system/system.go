// Package system is the engine's one way to the disk: the [System]
// interface, the [Real] filesystem and the recording [DryRun], plus the
// stable E_IO_* errors of a failed read or write.
package system

import (
	"io/fs"
)

// System is the only way the engine and the target adapters touch target
// files. Plan, diff, status, deploy and dry-run all run the same walk; only the
// System differs (chezmoi's idea): [Real] writes, [DryRun] records.
type System interface {
	// ReadFile returns the bytes of path.
	ReadFile(path string) ([]byte, error)
	// Lstat describes path without following a final symlink.
	Lstat(path string) (fs.FileInfo, error)
	// ReadDir lists a directory.
	ReadDir(path string) ([]fs.DirEntry, error)
	// WriteFile replaces path atomically with data, creating parent dirs.
	WriteFile(path string, data []byte, perm fs.FileMode) error
	// Remove deletes a file; a missing file is not an error.
	Remove(path string) error
}

// Op is one recorded mutation.
type Op struct {
	Op   string // write | remove
	Path string
	Data []byte
	Perm fs.FileMode
}
