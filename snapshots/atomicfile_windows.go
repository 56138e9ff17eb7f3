//go:build windows

package snapshots

// syncDir is a no-op: Windows cannot fsync a directory handle.
func syncDir(string) error { return nil }
