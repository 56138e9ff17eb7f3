//go:build unix && !linux

package fsys

import "golang.org/x/sys/unix"

// closePlaceStat closes fd and runs place; the stat data of what it placed
// are not taken here (*placed stays zero).
func closePlaceStat(fd int, placed *StatData, place func() error) error {
	if err := unix.Close(fd); err != nil {
		return err
	}
	return place()
}
