//go:build unix && !linux

package fsys

import "golang.org/x/sys/unix"

// closePlaceStat closes fd and runs place; what it placed is not looked at
// here (*placed stays zero).
func closePlaceStat(fd int, placed *Placed, place func() error) error {
	if err := unix.Close(fd); err != nil {
		return err
	}
	return place()
}
