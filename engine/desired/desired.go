// Package desired is the desired state: every file the selected modules
// render for the selected targets ([Compile]), with the managed roots they
// belong to and the conflicts between modules.
package desired

import (
	"bytes"
	"slices"
	"sort"
	"strings"

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

// File is one desired file with the root it belongs to.
type File struct {
	Target string
	Root   fsys.AbsPath
	target.DesiredFile
	SHA256 string
}

// State is every file the selected profile and targets want on disk.
type State struct {
	Targets []string
	Roots   []Root
	// Stale are roots this repo deployed to that the config no longer
	// produces; plan deletes what their manifests list.
	Stale []Root
	// Files sorted by (Target, Path).
	Files  []*File
	byPath map[fsys.AbsPath]*File
}

// Bytes returns f's bytes: Data, or, for a file restored from a cache
// without them, its source file's bytes read through sys, checked against
// f's hash (a source that changed since it was compiled is an error, never
// other bytes written).
func (f *File) Bytes(sys fsys.System) ([]byte, error) {
	if f.Data != nil || f.Src == "" || f.Keyed != nil {
		return f.Data, nil
	}
	return ReadSource(sys, f.Src, f.SHA256)
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
func (d *State) File(path fsys.AbsPath) *File { return d.byPath[path] }

// FileAt is [State.File] of a path held in a buffer, looked up without
// copying it: its Path is then a string to share instead of making one.
func (d *State) FileAt(path []byte) *File { return d.byPath[fsys.AbsPath(path)] }

// add merges f into the state: identical bytes merge module ids; different
// bytes for one path are E_DESIRED_STATE_CONFLICT.
func (d *State) add(f *File) error {
	prev, ok := d.byPath[f.Path]
	if !ok {
		d.byPath[f.Path] = f
		d.Files = append(d.Files, f)
		return nil
	}
	if bytes.Equal(prev.Data, f.Data) && prev.SHA256 == f.SHA256 && prev.Target == f.Target {
		prev.ModuleIDs = mergeIDs(prev.ModuleIDs, f.ModuleIDs)
		return nil
	}
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
// them: files must be sorted by (Target, Path), as [Compile] leaves them.
func Restore(targets []string, roots, stale []Root, files []*File) *State {
	d := &State{Targets: targets, Roots: roots, Stale: stale, Files: files, byPath: make(map[fsys.AbsPath]*File, len(files))}
	for _, f := range files {
		d.byPath[f.Path] = f
	}
	return d
}
