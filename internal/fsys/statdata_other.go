//go:build !linux

package fsys

import "os"

// rawStat is os.Lstat (os.Stat when follow) as a [StatData].
func rawStat(path string, follow bool) (StatData, error) {
	if follow {
		return dataOf(os.Stat(path))
	}
	return dataOf(os.Lstat(path))
}
