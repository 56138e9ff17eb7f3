//go:build !linux && !solaris && !illumos && !aix && !darwin && !freebsd && !openbsd && !netbsd && !dragonfly

package fsys

import "io/fs"

// statExtra is unknown here: only size, mode and modification time count.
func statExtra(fs.FileInfo) (ctime int64, ino uint64) { return 0, 0 }
