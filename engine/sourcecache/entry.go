// Package sourcecache is the on-disk form of a compiled desired state and
// the stat data of every source path its load read: one compact binary
// file that a later command decodes instead of reading, parsing and
// hashing an unchanged repo again. It only encodes and decodes; the engine
// decides when an entry may be used.
package sourcecache

import (
	"bytes"
	"cmp"
	"encoding/json"
	"io"
	"io/fs"
	"math"
	"slices"

	"github.com/agentpack/agentpack/engine/desired"
	"github.com/agentpack/agentpack/engine/module"
	"github.com/agentpack/agentpack/engine/target"
	"github.com/agentpack/agentpack/internal/arena"
	"github.com/agentpack/agentpack/internal/cfgedit"
	"github.com/agentpack/agentpack/internal/fsys"
)

// magic starts every cache file; the byte after it is the format version.
// A file with another magic or version is ignored and rebuilt.
const (
	magic   = "agentpack source cache\n"
	version = 7
)

// Entry is one cached load: what it was loaded for (Key), what it read
// (Fingerprint) and what it compiled.
type Entry struct {
	// Key names the request, environment and build the load was for.
	Key string
	// Fingerprint is what [Encode] writes; [Decode] leaves it nil and
	// sets Stamp, the same entries still encoded.
	Fingerprint *fsys.Fingerprint
	Stamp       Stamp
	Repo        string
	Project     fsys.AbsPath
	Profile     string
	Targets     []string
	// Configured are the target names agentpack.yaml configures.
	Configured []string
	Warnings   []string
	// Relocatable says the compiled state may be moved to another
	// project's folder (the engine decides when).
	Relocatable bool
	// Desired is what [Encode] writes; [Decode] leaves it nil until
	// [Entry.DecodeDesired], so an entry whose Stamp shows a change costs
	// no decoded state.
	Desired *desired.State
	rest    *reader
}

// Encode writes e's cache file to out: magic, version, the entry, and a
// CRC-32C of all that, so a torn or damaged file is told from a good one.
// It fails (and out must be thrown away) when a file has neither bytes nor
// a source the fingerprint covers.
func Encode(out io.Writer, e *Entry) error {
	w := newWriter(out, magic, version)
	w.String(e.Key)
	fp := e.Fingerprint.Entries()
	w.fingerprint(fp)
	w.String(e.Repo)
	w.String(string(e.Project))
	w.String(e.Profile)
	w.Strings(e.Targets)
	w.Strings(e.Configured)
	w.Strings(e.Warnings)
	w.Bool(e.Relocatable)
	if err := encodeDesired(w, e.Desired, fp); err != nil {
		return err
	}
	return w.Close()
}

// Decode takes a cache file apart up to its desired state (see
// [Entry.DecodeDesired]); anything but a complete file of this version is
// an error (the caller rebuilds). data is handed over: the Stamp is a
// part of it, so nothing may change it afterwards.
func Decode(data []byte) (*Entry, error) {
	r, key, fp, err := openKeyed(data, magic, version)
	if err != nil {
		return nil, err
	}
	e := &Entry{Key: key, Stamp: fp}
	e.Repo, e.Project, e.Profile = r.str(), fsys.AbsPath(r.str()), r.str()
	e.Targets, e.Configured, e.Warnings = r.strs(), r.strs(), r.strs()
	e.Relocatable = r.Bool()
	if r.Err != nil {
		return nil, errDamaged
	}
	e.rest = r
	return e, nil
}

// DecodeDesired decodes the rest of a [Decode]d entry, its desired state,
// once; its strings are copies, not parts of the file's data.
func (e *Entry) DecodeDesired() (*desired.State, error) {
	if e.Desired != nil || e.rest == nil {
		return e.Desired, nil
	}
	r := e.rest
	e.rest = nil
	d := decodeDesired(r)
	if r.Err != nil || len(r.B) != 0 {
		return nil, errDamaged
	}
	e.Desired = d
	return d, nil
}

func encodeRoots(w *writer, roots []desired.Root) {
	w.Len(len(roots), roots == nil)
	for _, r := range roots {
		w.String(r.Target)
		w.String(string(r.Path))
		w.Bool(r.ScanExtras)
	}
}

func decodeRoots(r *reader) []desired.Root {
	n, isNil := r.Len(3)
	if isNil {
		return nil
	}
	out := make([]desired.Root, n)
	for i := range out {
		out[i] = desired.Root{Target: r.str(), Path: fsys.AbsPath(r.str()), ScanExtras: r.Bool()}
	}
	return out
}

// encodeDesired writes d's files; a file's origin (target, root, module
// ids, source folder) is written once, then by number, and its source
// file, when it is a verbatim copy the fingerprint covers, is the length
// of the tail of its path that follows the origin's source folder: the
// fingerprint vouches for the source, and the file's hash checks it when
// the bytes are read. Made bytes (and a source the fingerprint misses)
// are kept whole.
func encodeDesired(w *writer, d *desired.State, fp []fsys.FingerprintEntry) error {
	w.Strings(d.Targets)
	encodeRoots(w, d.Roots)
	encodeRoots(w, d.Stale)
	w.Uint(uint64(len(d.Files)))
	origins := map[*desired.Origin]uint64{}
	var prev fsys.AbsPath
	for _, f := range d.Files {
		if i, ok := origins[f.Origin]; ok {
			w.Uint(i + 1)
		} else {
			origins[f.Origin] = uint64(len(origins))
			w.Uint(0)
			w.sym(f.Target)
			w.sym(string(f.Root))
			w.Len(len(f.ModuleIDs), f.ModuleIDs == nil)
			for _, id := range f.ModuleIDs {
				w.sym(id)
			}
			w.sym(string(f.SrcDir()))
		}
		w.sha(f.SHA256)
		w.path(string(prev), string(f.Path))
		prev = f.Path
		src := f.Src()
		_, found := slices.BinarySearchFunc(fp, src, func(e fsys.FingerprintEntry, p fsys.AbsPath) int { return cmp.Compare(e.Path, p) })
		if src == "" || !found || f.Keyed != nil {
			if src != "" && f.Data == nil {
				return errNoBytes // a copy of a source the fingerprint misses
			}
			w.Bool(false)
			w.Bytes(f.Data)
		} else {
			w.Bool(true)
			w.Uint(uint64(f.SrcTail()))
			w.Uint(uint64(f.SrcUse()))
		}
		w.Uint(uint64(f.Mode))
		w.Bool(f.Marked)
		w.Bool(f.Keyed != nil)
		if f.Keyed != nil {
			if err := encodeKeyed(w, f.Keyed); err != nil {
				return err
			}
		}
		w.Flush()
	}
	return nil
}

// decodeDesired reads what encodeDesired wrote. The files are one slice,
// their paths and hashes a few large buffers, and an origin is shared by
// the files of its module and root.
func decodeDesired(r *reader) *desired.State {
	targets, roots, stale := r.strs(), decodeRoots(r), decodeRoots(r)
	n := r.Uint()
	if n > uint64(len(r.B)) {
		r.Fail()
		return nil
	}
	files := make([]desired.File, n)
	ptrs := make([]*desired.File, n)
	strs := arena.New(64 << 10)
	var origins []*desired.Origin
	var prev string
	for i := range files {
		f := &files[i]
		switch o := r.Uint(); {
		case o == 0:
			origins = append(origins, decodeOrigin(r))
			f.Origin = origins[len(origins)-1]
		case o <= uint64(len(origins)):
			f.Origin = origins[o-1]
		default:
			r.Fail()
			return nil
		}
		f.SHA256 = r.sha(strs)
		prev = r.path(strs, prev)
		f.Path = fsys.AbsPath(prev)
		if !r.Bool() {
			f.Data = bytes.Clone(r.Bytes()) // a slice of data would be writable
		} else if tail, use := r.Uint(), r.Uint(); tail <= uint64(min(len(f.Path), math.MaxUint16)) && use <= uint64(module.UseSkillMain) {
			f.SetSrc(int(tail), module.Use(use))
		} else {
			r.Fail()
		}
		f.Mode = fs.FileMode(r.Uint())
		f.Marked = r.Bool()
		if r.Bool() {
			f.Keyed = decodeKeyed(r)
		}
		if r.Err != nil {
			return nil
		}
		ptrs[i] = f
	}
	return desired.Restore(targets, roots, stale, ptrs)
}

// decodeOrigin reads an origin encodeDesired wrote.
func decodeOrigin(r *reader) *desired.Origin {
	target, root := r.sym(), fsys.AbsPath(r.sym())
	var ids []string
	if k, isNil := r.Len(1); !isNil {
		ids = make([]string, k)
		for j := range ids {
			ids[j] = r.sym()
		}
	}
	return desired.NewOrigin(target, root, ids, fsys.AbsPath(r.sym()))
}

// encodeKeyed stores each entry's value as JSON: the config editors turn
// every value into JSON's plain types before writing it anyway.
func encodeKeyed(w *writer, k *target.KeyedFile) error {
	w.String(string(k.Format))
	w.Strings(k.Container)
	w.Len(len(k.Entries), k.Entries == nil)
	for _, e := range k.Entries {
		v, err := json.Marshal(e.Value)
		if err != nil {
			return err
		}
		w.String(e.Name)
		w.Bytes(v)
		w.Strings(e.ModuleIDs)
	}
	return nil
}

func decodeKeyed(r *reader) *target.KeyedFile {
	k := &target.KeyedFile{Format: cfgedit.Format(r.str()), Container: r.strs()}
	n, isNil := r.Len(3)
	if isNil {
		return k
	}
	k.Entries = make([]target.KeyedEntry, n)
	for i := range k.Entries {
		k.Entries[i].Name = r.str()
		raw := r.Bytes()
		k.Entries[i].ModuleIDs = r.strs()
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		if r.Err == nil && d.Decode(&k.Entries[i].Value) != nil {
			r.Fail()
		}
	}
	return k
}
