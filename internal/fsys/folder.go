package fsys

import "io/fs"

// Folder is a folder held open to create files in it by name: its path is
// walked once for all of them instead of twice for each (a cold deploy
// writes ten files a folder), and each file goes into the folder that was
// opened even if a folder above it is replaced meanwhile.
type Folder interface {
	// CreateFileStat creates name in the folder with data and perm as
	// [WriteFileStat] with create set does: it fails matching
	// fs.ErrExist when something is there, and tells what it placed.
	CreateFileStat(name string, data []byte, perm fs.FileMode) (Placed, error)
	Close() error
}

// FolderOpener is implemented by a [System] that can hold a folder open
// for creates.
type FolderOpener interface {
	// OpenFolder opens the folder dir, which exists and is not a link,
	// for creates.
	OpenFolder(dir AbsPath) (Folder, error)
}

// OpenFolder opens dir for creates through sys's own OpenFolder, or is
// nil when sys has none or cannot open it: the caller then creates by
// path, as without it.
func OpenFolder(sys System, dir AbsPath) Folder {
	if o, ok := sys.(FolderOpener); ok {
		if f, err := o.OpenFolder(dir); err == nil {
			return f
		}
	}
	return nil
}
