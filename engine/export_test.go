package engine

// SetDiffHeld sets how many bytes of sources a diff holds (see diffHeld)
// for a test, and returns what puts it back.
func SetDiffHeld(n int64) (restore func()) {
	old := diffHeld
	diffHeld = n
	return func() { diffHeld = old }
}
