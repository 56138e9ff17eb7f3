package fsys

import "io/fs"

// ChangeTimeInode is the inode change time (ns) and inode number of fi,
// both 0 where the platform does not expose them. Stat caches use them: the
// change time moves on every write and chmod even when the modification
// time is put back, and a new inode means a replaced file.
func ChangeTimeInode(fi fs.FileInfo) (ctime int64, ino uint64) { return statExtra(fi) }
