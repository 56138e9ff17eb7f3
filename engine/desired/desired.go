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

	"github.com/agentpack/agentpack/engine/module"
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

// Origin is what the files of one module in one root have in common: a
// target, a root, module ids and the folder their sources lie in. Files
// point to a shared one instead of each holding five strings (100,000
// files are one origin per module, not 100,000 of each).
type Origin struct {
	Target    string
	Root      fsys.AbsPath
	ModuleIDs []string
	// srcDir is the source folder of its files' [File.Src].
	srcDir fsys.AbsPath
}

// NewOrigin returns the origin of files of target at root from the
// modules ids whose sources lie in srcDir (see [File.Src]).
func NewOrigin(target string, root fsys.AbsPath, ids []string, srcDir fsys.AbsPath) *Origin {
	return &Origin{Target: target, Root: root, ModuleIDs: ids, srcDir: srcDir}
}

// SrcDir is the folder o's files' sources lie in.
func (o *Origin) SrcDir() fsys.AbsPath { return o.srcDir }

// File is one desired file with the root it belongs to ([target.DesiredFile]
// as the desired state keeps it: 80 bytes a file, not 168, plus its path
// and hash).
type File struct {
	*Origin
	Path fsys.AbsPath
	// SHA256 is the hex sha256 of the file's bytes (of its entries, for a
	// key-level file).
	SHA256 string
	Data   []byte
	Keyed  *target.KeyedFile
	Mode   fs.FileMode
	// srcTail is how many bytes at the end of Path follow the origin's
	// source folder in [File.Src]; 0 makes the folder the whole path.
	srcTail uint16
	Marked  bool
	hasSrc  bool
	// srcUse is what compiling did with the source's bytes
	// ([target.DesiredFile.SrcUse]).
	srcUse module.Use
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

// NewFile is a desired file of target at root made from what an adapter
// rendered, with an origin of its own (see [NewFileOf]); its SrcSHA256 is
// dropped: the file's hash is sum.
func NewFile(target string, root fsys.AbsPath, f target.DesiredFile, sum string) *File {
	out := NewFileOf(NewOrigin(target, root, f.ModuleIDs, f.Src), f, sum, f.Src != "", 0)
	return &out
}

// NewFileOf is a desired file of o made from what an adapter rendered
// (o's module ids stand for f's), whose source, when hasSrc, is o's
// source folder followed by the last srcTail bytes of f's path (srcTail 0:
// the folder is the whole source path).
func NewFileOf(o *Origin, f target.DesiredFile, sum string, hasSrc bool, srcTail int) File {
	return File{Origin: o, Path: f.Path, SHA256: sum, Data: f.Data, Keyed: f.Keyed, Mode: f.Mode, Marked: f.Marked,
		hasSrc: hasSrc, srcTail: uint16(srcTail), srcUse: srcUseOf(hasSrc, f.SrcUse, f.Keyed)}
}

// Src is the source file whose bytes the file's are, byte for byte (a
// module file copied verbatim), or "" ([target.DesiredFile.Src]). It is a
// new string each call unless the origin's folder is the whole path.
func (f *File) Src() fsys.AbsPath {
	switch {
	case !f.hasSrc:
		return ""
	case f.srcTail == 0:
		return f.srcDir
	}
	return f.srcDir + f.Path[len(f.Path)-int(f.srcTail):]
}

// HasSrc reports whether f has a source file ([File.Src] is not "").
func (f *File) HasSrc() bool { return f.hasSrc }

// SrcTail is how f's source path is made of its origin's source folder
// and its own path: see [NewFileOf].
func (f *File) SrcTail() int { return int(f.srcTail) }

// SetSrc gives f a source file: its origin's source folder followed by
// the last tail bytes of its path (see [NewFileOf]), and what compiling
// did with the source's bytes ([File.SrcUse]).
func (f *File) SetSrc(tail int, use module.Use) {
	f.hasSrc, f.srcTail, f.srcUse = true, uint16(tail), srcUseOf(true, use, f.Keyed)
}

// srcUseOf is the [File.SrcUse] of a file with a source (hasSrc), keyed
// or not, made from a source file the load used as use says.
func srcUseOf(hasSrc bool, use module.Use, keyed *target.KeyedFile) module.Use {
	if !hasSrc || keyed != nil {
		return module.UseParsed
	}
	return use
}

// SrcUse is what compiling f did with its source's bytes: anything but
// [module.UseParsed] says f is a copy of a source from which nothing else
// of the state was made, so an edit of that source (that passes the check
// the use names) changes f's hash and nothing more ([Copies.Rehashed]).
func (f *File) SrcUse() module.Use { return f.srcUse }

// Copies is a state's files indexed by the source file each copies
// ([File.Src]), for the sources edited in place that the state may be
// patched for ([Copies.Rehashed]) instead of compiled again.
type Copies struct {
	d     *State
	bySrc map[fsys.AbsPath]sourceCopies
}

// sourceCopies are the files copied from one source and how compiling
// used its bytes: module.UseParsed unless every copy used them alike.
type sourceCopies struct {
	use   module.Use
	files []*File
}

// Copies indexes d's files by their source. d is not changed (a server
// shares it between calls).
func (d *State) Copies() *Copies {
	c := &Copies{d: d, bySrc: map[fsys.AbsPath]sourceCopies{}}
	for _, f := range d.Files {
		if !f.hasSrc {
			continue
		}
		p := f.Src()
		sc, seen := c.bySrc[p]
		if !seen {
			sc.use = f.srcUse
		} else if sc.use != f.srcUse {
			sc.use = module.UseParsed
		}
		sc.files = append(sc.files, f)
		c.bySrc[p] = sc
	}
	return c
}

// Use is how the copies of the source p used its bytes, when p is the
// source of a file of the state and every file with that source used them
// alike and not as [module.UseParsed]: what [Copies.Rehashed] accepts.
// UseParsed otherwise.
func (c *Copies) Use(p fsys.AbsPath) module.Use { return c.bySrc[p].use }

// Rehashed is the state with the copies of each source file in sums given
// its new hash: what compiling again after an edit of those files alone
// would give, when every file copied from them used their bytes as
// [Copies.Use] accepts (the caller runs the check that use names). ok is
// false when one did not, or a source in sums is no file's (it was read
// for something else: compile again). The state is left as it is; the
// copy shares every file but those rehashed.
func (c *Copies) Rehashed(sums map[fsys.AbsPath]string) (out *State, ok bool) {
	rehashed := map[*File]*File{}
	for p, sum := range sums {
		sc := c.bySrc[p]
		if sc.use == module.UseParsed {
			return nil, false
		}
		for _, f := range sc.files {
			g := *f
			g.SHA256 = sum
			rehashed[f] = &g
		}
	}
	swap := func(files []*File) []*File {
		if files == nil {
			return nil
		}
		files = slices.Clone(files)
		for i, f := range files {
			if g := rehashed[f]; g != nil {
				files[i] = g
			}
		}
		return files
	}
	d := c.d
	return &State{Targets: d.Targets, Roots: d.Roots, Stale: d.Stale, Files: swap(d.Files), byPath: swap(d.byPath)}, true
}

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
	return ReadSourceInto(sys, src, sum, nil)
}

// ReadSourceInto is [ReadSource] reading into buf when it has room (the
// bytes then share buf's memory), for a writer that reuses one buffer
// for file after file: a cold deploy of 10,000 files allocated 9 MB for
// bytes each held for one write, and on a VM where a fresh page costs
// 20 µs to fault in, the heap they grew cost more than reading them.
//
// A source that fits buf is first read with no look at it (fsys.ReadFit):
// the hash says whether what was read is the file the plan promised, and
// anything else is read again the careful way, which tells why it differs.
func ReadSourceInto(sys fsys.System, src fsys.AbsPath, sum string, buf []byte) ([]byte, error) {
	if data, ok := fsys.ReadFit(sys, src, buf); ok && checksum.SHA256Hex(data) == sum {
		return data, nil
	}
	data, fi, err := fsys.ReadRegular(sys, src, buf)
	if err == nil && data == nil && fi != nil {
		// Not a regular file: a link is followed, as a module's files
		// are when loaded, and anything else refused by ReadFile.
		data, err = sys.ReadFile(src)
	}
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
func (d *State) FileAt(path []byte) *File { return d.find(viewString(path)) }

// viewString is b's bytes as a string without a copy, for a lookup that
// only compares with it and never keeps it.
func viewString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// find is the file at path by binary search of the files sorted by path.
func (d *State) find(path string) *File {
	f, _ := d.findFrom(path, -1)
	return f
}

// findFrom is find trying the file at index next (of the files sorted by
// path) first; it also returns the index after the one looked up (where
// path would be, when it is not there).
func (d *State) findFrom(path string, next int) (*File, int) {
	files := d.byPath
	if files == nil {
		files = d.Files
	}
	if next >= 0 && next < len(files) && string(files[next].Path) == path {
		return files[next], next + 1
	}
	i, ok := slices.BinarySearchFunc(files, path, func(f *File, p string) int { return strings.Compare(string(f.Path), p) })
	if !ok {
		return nil, i
	}
	return files[i], i + 1
}

// Cursor looks up files of d by path, in path order: each lookup first
// tries the file after the one found last. A manifest lists its 10,000
// files in the order the desired state holds them, so most lookups cost
// one comparison instead of a binary search's fourteen, each over paths
// sharing a long prefix. Lookups in any other order are answered all the
// same.
type Cursor struct {
	d    *State
	next int
}

// Cursor returns a [Cursor] over d's files.
func (d *State) Cursor() *Cursor { return &Cursor{d: d} }

// File is [State.File] through c.
func (c *Cursor) File(path fsys.AbsPath) *File {
	var f *File
	f, c.next = c.d.findFrom(string(path), c.next)
	return f
}

// FileAt is [State.FileAt] through c.
func (c *Cursor) FileAt(path []byte) *File { return c.File(fsys.AbsPath(viewString(path))) }

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
