//go:build !unix

package fsys

// processGone cannot tell here: a marker folder is never swept.
func processGone(int) bool { return false }

// ownFolder is never asked where processGone cannot tell.
func ownFolder(string) bool { return false }
