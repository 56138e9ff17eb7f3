// Package sourcecache is the on-disk form of a compiled desired state and
// the stat data of every source path its load read: one compact binary
// file that a later command decodes instead of reading, parsing and
// hashing an unchanged repo again. It only encodes and decodes; the engine
// decides when an entry may be used.
package sourcecache

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"io/fs"
	"slices"

	"github.com/agentpack/agentpack/engine/desired"
	"github.com/agentpack/agentpack/engine/target"
	"github.com/agentpack/agentpack/internal/cfgedit"
	"github.com/agentpack/agentpack/internal/fsys"
)

// magic starts every cache file; the byte after it is the format version.
// A file with another magic or version is ignored and rebuilt.
const (
	magic   = "agentpack source cache\n"
	version = 2
)

// Entry is one cached load: what it was loaded for (Key), what it read
// (Fingerprint) and what it compiled.
type Entry struct {
	// Key names the request, environment and build the load was for.
	Key         string
	Fingerprint *fsys.Fingerprint
	Repo        string
	Project     fsys.AbsPath
	Profile     string
	Targets     []string
	// Configured are the target names agentpack.yaml configures.
	Configured []string
	Warnings   []string
	Desired    *desired.State
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Encode is e's cache file: magic, version, the entry, and a CRC-32C of
// all that, so a torn or damaged file is told from a good one.
func Encode(e *Entry) ([]byte, error) {
	w := &writer{b: make([]byte, 0, sizeHint(e))}
	w.b = append(w.b, magic...)
	w.b = append(w.b, version)
	w.string(e.Key)
	fp := e.Fingerprint.Entries()
	w.uint(uint64(len(fp)))
	for _, f := range fp {
		w.string(string(f.Path))
		w.bool(f.Follow)
		w.bool(f.Listed)
		w.bool(f.Missing)
		w.uint(uint64(f.Mode))
		w.int(f.Size)
		w.int(f.MtimeNS)
		w.int(f.CtimeNS)
		w.uint(f.Ino)
	}
	w.string(e.Repo)
	w.string(string(e.Project))
	w.string(e.Profile)
	w.strings(e.Targets)
	w.strings(e.Configured)
	w.strings(e.Warnings)
	if err := encodeDesired(w, e.Desired, fp); err != nil {
		return nil, err
	}
	return binary.BigEndian.AppendUint32(w.b, crc32.Checksum(w.b, castagnoli)), nil
}

// sizeHint is about how many bytes e encodes to, so the buffer is made
// once instead of grown (and copied) a dozen times at 10,000 files.
func sizeHint(e *Entry) int {
	n := 1 << 12
	for _, f := range e.Fingerprint.Entries() {
		n += len(f.Path) + 40
	}
	if e.Desired != nil {
		for _, f := range e.Desired.Files {
			n += len(f.Path) + len(f.SHA256) + 16
			if f.Src == "" {
				n += len(f.Data)
			}
		}
	}
	return n
}

// Decode takes a cache file apart; anything but a complete file of this
// version is an error (the caller rebuilds). The entry's file bytes share
// data's memory.
func Decode(data []byte) (*Entry, error) {
	if len(data) < len(magic)+1+4 || string(data[:len(magic)]) != magic || data[len(magic)] != version {
		return nil, errDamaged
	}
	body, sum := data[:len(data)-4], data[len(data)-4:]
	if crc32.Checksum(body, castagnoli) != binary.BigEndian.Uint32(sum) {
		return nil, errDamaged
	}
	r := &reader{b: body[len(magic)+1:]}
	e := &Entry{Key: r.string()}
	n := r.uint()
	if n > uint64(len(r.b)) {
		return nil, errDamaged
	}
	fp := make([]fsys.FingerprintEntry, n)
	for i := range fp {
		fp[i] = fsys.FingerprintEntry{Path: fsys.AbsPath(r.string()), Follow: r.bool(), Listed: r.bool(), Missing: r.bool(), Mode: fs.FileMode(r.uint()),
			Size: r.int(), MtimeNS: r.int(), CtimeNS: r.int(), Ino: r.uint()}
	}
	e.Fingerprint = fsys.NewFingerprint(fp)
	e.Repo, e.Project, e.Profile = r.string(), fsys.AbsPath(r.string()), r.string()
	e.Targets, e.Configured, e.Warnings = r.strings(), r.strings(), r.strings()
	e.Desired = decodeDesired(r, fp)
	if r.err != nil || len(r.b) != 0 {
		return nil, errDamaged
	}
	return e, nil
}

func encodeRoots(w *writer, roots []desired.Root) {
	w.len(len(roots), roots == nil)
	for _, r := range roots {
		w.string(r.Target)
		w.string(string(r.Path))
		w.bool(r.ScanExtras)
	}
}

func decodeRoots(r *reader) []desired.Root {
	n, isNil := r.len(3)
	if isNil {
		return nil
	}
	out := make([]desired.Root, n)
	for i := range out {
		out[i] = desired.Root{Target: r.string(), Path: fsys.AbsPath(r.string()), ScanExtras: r.bool()}
	}
	return out
}

// encodeDesired writes d's files; a file's target, root and module ids
// are symbols (written once, then by number), and its source file, when
// it is a verbatim copy, is the number of that path's fingerprint entry:
// the fingerprint covers it, and the file's hash checks it when the bytes
// are read. Made bytes (and a source the fingerprint misses) are kept whole.
func encodeDesired(w *writer, d *desired.State, fp []fsys.FingerprintEntry) error {
	w.strings(d.Targets)
	encodeRoots(w, d.Roots)
	encodeRoots(w, d.Stale)
	w.uint(uint64(len(d.Files)))
	for _, f := range d.Files {
		w.sym(f.Target)
		w.sym(string(f.Root))
		w.string(f.SHA256)
		w.string(string(f.Path))
		src, found := slices.BinarySearchFunc(fp, f.Src, func(e fsys.FingerprintEntry, p fsys.AbsPath) int { return cmp.Compare(e.Path, p) })
		if f.Src == "" || !found || f.Keyed != nil {
			if f.Src != "" && f.Data == nil {
				return errNoBytes // a copy of a source the fingerprint misses
			}
			w.uint(0)
			w.bytes(f.Data)
		} else {
			w.uint(uint64(src) + 1)
		}
		w.uint(uint64(f.Mode))
		w.len(len(f.ModuleIDs), f.ModuleIDs == nil)
		for _, id := range f.ModuleIDs {
			w.sym(id)
		}
		w.bool(f.Marked)
		w.bool(f.Keyed != nil)
		if f.Keyed != nil {
			if err := encodeKeyed(w, f.Keyed); err != nil {
				return err
			}
		}
	}
	return nil
}

func decodeDesired(r *reader, fp []fsys.FingerprintEntry) *desired.State {
	targets, roots, stale := r.strings(), decodeRoots(r), decodeRoots(r)
	n := r.uint()
	if n > uint64(len(r.b)) {
		r.fail()
		return nil
	}
	files := make([]desired.File, n)
	ptrs := make([]*desired.File, n)
	for i := range files {
		f := &files[i]
		f.Target, f.Root, f.SHA256, f.Path = r.sym(), fsys.AbsPath(r.sym()), r.string(), fsys.AbsPath(r.string())
		switch src := r.uint(); {
		case src == 0:
			f.Data = r.bytes()
		case src <= uint64(len(fp)):
			f.Src = fp[src-1].Path
		default:
			r.fail()
		}
		f.Mode = fs.FileMode(r.uint())
		if k, isNil := r.len(1); !isNil {
			f.ModuleIDs = make([]string, k)
			for j := range f.ModuleIDs {
				f.ModuleIDs[j] = r.sym()
			}
		}
		f.Marked = r.bool()
		if r.bool() {
			f.Keyed = decodeKeyed(r)
		}
		ptrs[i] = f
	}
	return desired.Restore(targets, roots, stale, ptrs)
}

// encodeKeyed stores each entry's value as JSON: the config editors turn
// every value into JSON's plain types before writing it anyway.
func encodeKeyed(w *writer, k *target.KeyedFile) error {
	w.string(string(k.Format))
	w.strings(k.Container)
	w.len(len(k.Entries), k.Entries == nil)
	for _, e := range k.Entries {
		v, err := json.Marshal(e.Value)
		if err != nil {
			return err
		}
		w.string(e.Name)
		w.bytes(v)
		w.strings(e.ModuleIDs)
	}
	return nil
}

func decodeKeyed(r *reader) *target.KeyedFile {
	k := &target.KeyedFile{Format: cfgedit.Format(r.string()), Container: r.strings()}
	n, isNil := r.len(3)
	if isNil {
		return k
	}
	k.Entries = make([]target.KeyedEntry, n)
	for i := range k.Entries {
		k.Entries[i].Name = r.string()
		raw := r.bytes()
		k.Entries[i].ModuleIDs = r.strings()
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		if r.err == nil && d.Decode(&k.Entries[i].Value) != nil {
			r.fail()
		}
	}
	return k
}
