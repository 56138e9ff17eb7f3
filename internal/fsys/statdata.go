package fsys

import "io/fs"

// StatData is what a stat says of a path, as a plain value: the type and
// permissions, size, modification and change times and inode. Stat caches
// compare it; taking it with [LstatData] costs no allocation where the
// System can (a 10,000-file status takes more than 20,000 of them).
type StatData struct {
	Mode    fs.FileMode
	Size    int64
	MtimeNS int64
	CtimeNS int64
	Ino     uint64
}

// StatDataOf is the StatData fi describes.
func StatDataOf(fi fs.FileInfo) StatData {
	ctime, ino := statExtra(fi)
	return StatData{Mode: fi.Mode(), Size: fi.Size(), MtimeNS: fi.ModTime().UnixNano(), CtimeNS: ctime, Ino: ino}
}

// IsDir reports whether d describes a folder.
func (d StatData) IsDir() bool { return d.Mode.IsDir() }

// IsLink reports whether d describes a symbolic link.
func (d StatData) IsLink() bool { return d.Mode&fs.ModeSymlink != 0 }

// dataStatter is a [System] that stats into a [StatData] directly.
type dataStatter interface {
	statData(path AbsPath, follow bool) (StatData, error)
}

// LstatData is sys.Lstat(path) as a [StatData], with the same errors.
func LstatData(sys System, path AbsPath) (StatData, error) {
	return statDataOf(sys, path, false)
}

// StatDataFollow is sys.Stat(path) (following links) as a [StatData], with the
// same errors.
func StatDataFollow(sys System, path AbsPath) (StatData, error) {
	return statDataOf(sys, path, true)
}

func statDataOf(sys System, path AbsPath, follow bool) (StatData, error) {
	if s, ok := sys.(dataStatter); ok {
		return s.statData(path, follow)
	}
	if follow {
		return dataOf(sys.Stat(path))
	}
	return dataOf(sys.Lstat(path))
}

// dataOf is a stat's answer as a [StatData].
func dataOf(fi fs.FileInfo, err error) (StatData, error) {
	if err != nil {
		return StatData{}, err
	}
	return StatDataOf(fi), nil
}

// statData implements dataStatter.
func (s *ReadOnlySystem) statData(path AbsPath, follow bool) (StatData, error) {
	return statDataOf(s.base, path, follow)
}

// statData implements dataStatter.
func (s *RealSystem) statData(path AbsPath, follow bool) (StatData, error) {
	d, err := rawStat(string(path), follow)
	return d, statError(err, path)
}
