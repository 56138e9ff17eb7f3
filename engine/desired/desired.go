// Package desired is the desired state: every file the selected modules
// render for the selected targets ([Compile]), with the managed roots they
// belong to and the conflicts between modules.
package desired

import (
	"io/fs"
	"slices"
	"sort"
	"strings"
	"unsafe"

	"github.com/agentpack/agentpack/engine/target"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/checksum"
	"github.com/agentpack/agentpack/internal/fsys"
)

// Root is a managed folder of one target.
type Root struct {
	Target     string
	Path       fsys.AbsPath
	ScanExtras bool
}

// Placement is the target and managed root of a desired file: one per
// root, which every file of the root points to, instead of two strings
// in each of 100,000 files.
type Placement struct {
	Target string
	Root   fsys.AbsPath
}

// File is one desired file with the root it belongs to ([target.DesiredFile]
// as the desired state keeps it: 120 bytes a file, not 168, plus its path
// and hash).
type File struct {
	*Placement
	Path fsys.AbsPath
	// SHA256 is the hex sha256 of the file's bytes (of its entries, for a
	// key-level file).
	SHA256    string
	Data      []byte
	ModuleIDs []string
	Keyed     *target.KeyedFile
	// srcDir and srcTail are [target.DesiredFile.Src], read by [File.Src]:
	// the folder part, shared by the files of a module, and how many bytes
	// at the end of Path follow it (0: srcDir is the whole source path).
	srcDir  *fsys.AbsPath
	srcTail uint32
	Mode    fs.FileMode
	Marked  bool
}

// State is every file the selected profile and targets want on disk.
type State struct {
	Targets []string
	Roots   []Root
	// Stale are roots this repo deployed to that the config no longer
	// produces; plan deletes what their manifests list.
	Stale []Root
	// Files sorted by (Target, Path).
	Files []*File
	// byPath is Files sorted by Path when that is another order (several
	// targets), for [State.File]; nil when Files is sorted by Path.
	byPath []*File
}

// NewFile is a desired file of place made from what an adapter rendered
// (its Src kept as [File.Src], its SrcSHA256 dropped: the file's hash is
// sum).
func NewFile(place *Placement, f target.DesiredFile, sum string) File {
	out := File{Placement: place, Path: f.Path, SHA256: sum, Data: f.Data, ModuleIDs: f.ModuleIDs, Keyed: f.Keyed, Mode: f.Mode, Marked: f.Marked}
	if f.Src != "" {
		dir := f.Src
		out.srcDir = &dir
	}
	return out
}

// Src is the source file whose bytes the file's are, byte for byte (a
// module file copied verbatim), or "" ([target.DesiredFile.Src]). It is a
// new string each call unless the whole path was kept.
func (f *File) Src() fsys.AbsPath {
	if f.srcDir == nil {
		return ""
	}
	if f.srcTail == 0 {
		return *f.srcDir
	}
	return *f.srcDir + f.Path[len(f.Path)-int(f.srcTail):]
}

// HasSrc reports whether f has a source file ([File.Src] is not "").
func (f *File) HasSrc() bool { return f.srcDir != nil }

// SetSrc makes src f's source file, as the folder dir (shared between
// files) followed by the last tail bytes of f's path, which src must end
// with; tail 0 keeps dir as the whole source path.
func (f *File) SetSrc(dir *fsys.AbsPath, tail int) {
	f.srcDir, f.srcTail = dir, uint32(tail)
}

// SrcParts is how f keeps its source file: see [File.SetSrc].
func (f *File) SrcParts() (dir *fsys.AbsPath, tail int) { return f.srcDir, int(f.srcTail) }

// Bytes returns f's bytes: Data, or, for a file restored from a cache
// without them, its source file's bytes read through sys, checked against
// f's hash (a source that changed since it was compiled is an error, never
// other bytes written).
func (f *File) Bytes(sys fsys.System) ([]byte, error) {
	if f.Data != nil || !f.HasSrc() || f.Keyed != nil {
		return f.Data, nil
	}
	return ReadSource(sys, f.Src(), f.SHA256)
}

// ReadSource reads the source file src of a desired file whose hash is
// sum ([File.Bytes]): a plan keeps only these two, not the whole File, to
// read the bytes when it writes them.
func ReadSource(sys fsys.System, src fsys.AbsPath, sum string) ([]byte, error) {
	data, err := sys.ReadFile(src)
	if err != nil {
		return nil, err
	}
	if checksum.SHA256Hex(data) != sum {
		return nil, apperr.New(apperr.IOFailed, "%s changed while agentpack was using it", src).
			WithHint("run the command again once the module's files stop changing").
			With("path", src.String()).With("path_posix", src.ToSlash())
	}
	return data, nil
}

// File returns the desired file at path, or nil.
func (d *State) File(path fsys.AbsPath) *File { return d.find(string(path)) }

// FileAt is [State.File] of a path held in a buffer, looked up without
// copying it.
func (d *State) FileAt(path []byte) *File {
	if len(path) == 0 {
		return d.find("")
	}
	// The string is only compared with, never kept.
	return d.find(unsafe.String(&path[0], len(path)))
}

// find is the file at path by binary search of the files sorted by path.
func (d *State) find(path string) *File {
	files := d.byPath
	if files == nil {
		files = d.Files
	}
	i, ok := slices.BinarySearchFunc(files, path, func(f *File, p string) int { return strings.Compare(string(f.Path), p) })
	if !ok {
		return nil
	}
	return files[i]
}

// index sorts d's files by (Target, Path) and, when that is not also their
// order by Path, makes byPath.
func (d *State) index() {
	if !slices.IsSortedFunc(d.Files, compareFiles) {
		slices.SortFunc(d.Files, compareFiles)
	}
	d.byPath = nil
	if !slices.IsSortedFunc(d.Files, comparePaths) {
		d.byPath = slices.Clone(d.Files)
		slices.SortFunc(d.byPath, comparePaths)
	}
}

func compareFiles(a, b *File) int {
	if c := strings.Compare(a.Target, b.Target); c != 0 {
		return c
	}
	return comparePaths(a, b)
}

func comparePaths(a, b *File) int { return strings.Compare(string(a.Path), string(b.Path)) }

// conflict is E_DESIRED_STATE_CONFLICT of prev and f, two files at one
// path.
func conflict(prev, f *File) error {
	return apperr.New(apperr.DesiredStateConflict, "modules %s and %s both write %s with different content",
		strings.Join(prev.ModuleIDs, ","), strings.Join(f.ModuleIDs, ","), f.Path).
		WithHint("give one module a different name, or limit it with `targets:`").
		With("path", f.Path.String()).With("path_posix", f.Path.ToSlash()).
		With("target", f.Target).With("other_target", prev.Target).
		With("modules", []map[string]any{
			{"module_ids": prev.ModuleIDs, "sha256": prev.SHA256},
			{"module_ids": f.ModuleIDs, "sha256": f.SHA256},
		})
}

func mergeIDs(a, b []string) []string {
	out := append([]string(nil), a...)
	for _, x := range b {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	sort.Strings(out)
	return out
}

// RootFor returns the deepest root of target containing path, or "".
func (d *State) RootFor(target string, path fsys.AbsPath) fsys.AbsPath {
	var best fsys.AbsPath
	for _, r := range d.Roots {
		if r.Target != target {
			continue
		}
		// Contains is a prefix test on clean paths: cheap at 10,000 files.
		if r.Path.Contains(path) && len(r.Path) > len(best) {
			best = r.Path
		}
	}
	return best
}

// Restore rebuilds a compiled State from its parts, as a cache stored
// them: files should be sorted by (Target, Path), as [Compile] leaves them.
func Restore(targets []string, roots, stale []Root, files []*File) *State {
	d := &State{Targets: targets, Roots: roots, Stale: stale, Files: files}
	d.index()
	return d
}
