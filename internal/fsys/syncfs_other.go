//go:build !linux

package fsys

// haveSyncfs: without syncfs(2), durable writes fsync each file and folder.
const haveSyncfs = false

// syncFilesystems is never called without syncfs.
func syncFilesystems([]AbsPath) error { return nil }
