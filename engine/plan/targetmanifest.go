package plan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/agentpack/agentpack/engine/module"
	"github.com/agentpack/agentpack/engine/target"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/arena"
	"github.com/agentpack/agentpack/internal/cfgedit"
	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/agentpack/agentpack/internal/jsonstream"
)

// TargetManifestSchemaVersion is the version of .agentpack.manifest.*.json.
const TargetManifestSchemaVersion = 1

// TargetManifest records what agentpack wrote into one root (SPEC §2). It is
// the "last applied" leg of three-way drift.
type TargetManifest struct {
	SchemaVersion int    `json:"schema_version"`
	GeneratedAt   string `json:"generated_at"`
	Tool          string `json:"tool"`
	SnapshotID    string `json:"snapshot_id,omitempty"`
	// Profile is the profile deployed (an additive field), so status can say
	// when it compares against another one.
	Profile string `json:"profile,omitempty"`
	// Repo is the desired-state repo the deploy came from (an additive
	// field), so a plan from another repo can say it would take over.
	Repo         string        `json:"repo,omitempty"`
	ManagedFiles []ManagedFile `json:"managed_files"`
}

// ManagedFile is one managed file, root-relative with '/'.
type ManagedFile struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	// OwnedSHA256 is set for a marked file (several instructions modules
	// in one file): the hash of its agentpack blocks as written
	// ([target.OwnedSHA256]). Drift is measured on it, so the user's text
	// around the blocks is no drift.
	OwnedSHA256 string   `json:"owned_sha256,omitempty"`
	ModuleIDs   []string `json:"module_ids,omitempty"`

	// KeyLevel is set for a key-level file and nil for a whole file, so
	// the entries of 100,000 whole files hold no four empty fields each
	// (encoding/json writes its fields in place, and makes it when it
	// reads one of them).
	*KeyLevel
}

// KeyLevel is what a manifest says of a key-level file (a client's MCP
// config), owned entry by entry: Format and Container say how to edit
// it, Entries what agentpack owns there, and the file's SHA256 is then
// [target.EntriesSHA256] of those entries, so the user's own edits
// elsewhere in the file are no drift. Created says agentpack created the
// file, so it may delete it once nothing else is left. All four are
// additive fields, absent for whole files.
type KeyLevel struct {
	Format    string         `json:"format,omitempty"`
	Container []string       `json:"container,omitempty"`
	Entries   []ManagedEntry `json:"entries,omitempty"`
	Created   bool           `json:"created,omitempty"`
}

// EditedSince reports whether a file with data (hash sha) differs from
// what f says was written: for a marked file only its blocks count.
func (f ManagedFile) EditedSince(sha string, data []byte) bool {
	if sha == f.SHA256 {
		return false
	}
	if f.OwnedSHA256 == "" || data == nil {
		return true
	}
	return target.OwnedSHA256(data) != f.OwnedSHA256
}

// In is where f lies below root. f.Path passed [SafeRelPath] when its
// manifest was read, so it stays inside root.
func (f ManagedFile) In(root fsys.AbsPath) fsys.AbsPath { return f.in(root, nil) }

// in is [ManagedFile.In] made in strs (nil: an allocation of its own).
func (f ManagedFile) in(root fsys.AbsPath, strs *arena.Arena) fsys.AbsPath {
	if filepath.Separator == '/' && root != "/" && fsys.CleanAbs(root.String()) && fsys.CleanElems(f.Path) {
		// What Join gives, without cleaning clean paths.
		if strs != nil {
			return fsys.AbsPath(strs.Concat(string(root), "/", f.Path))
		}
		return root + "/" + fsys.AbsPath(f.Path)
	}
	return fsys.AbsPath(filepath.Join(root.String(), filepath.FromSlash(f.Path)))
}

// TargetManifestName is the manifest file name for a target.
func TargetManifestName(target string) string {
	return ".agentpack.manifest." + module.SafeName(target) + ".json"
}

// IsTargetManifestName reports whether a file name is an agentpack manifest.
func IsTargetManifestName(name string) bool {
	return strings.HasPrefix(name, ".agentpack.manifest.") && strings.HasSuffix(name, ".json")
}

// ReadTargetManifest loads root's manifest for target. A missing manifest is
// (nil, nil); an unreadable one, another schema_version, or one the
// project's git repository tracks is a warning and treated as missing.
// Entries that escape the root are dropped with a warning.
func ReadTargetManifest(sys fsys.System, tracked *GitTracked, root fsys.AbsPath, target string, warn func(string)) *TargetManifest {
	return ReadTargetManifestCached(sys, tracked, nil, root, target, warn)
}

// ReadTargetManifestCached is [ReadTargetManifest] taking the parsed
// manifest from cache when the file's stat data is unchanged since it was
// parsed (cache may be nil). Only the JSON parsing is skipped: the git
// index, the schema version and every entry are checked as for a freshly
// parsed manifest.
func ReadTargetManifestCached(sys fsys.System, tracked *GitTracked, cache *StatCache, root fsys.AbsPath, target string, warn func(string)) *TargetManifest {
	return readTargetManifest(sys, tracked, cache, root, target, warn, nil)
}

// readTargetManifest is [ReadTargetManifestCached]; a manifest taken from
// the cache shares the path and hash strings of the entries share's
// desired state also has (share may be nil).
func readTargetManifest(sys fsys.System, tracked *GitTracked, cache *StatCache, root fsys.AbsPath, target string, warn func(string), share *sharer) *TargetManifest {
	p := root.JoinName(TargetManifestName(target))
	if tracked.Has(p) {
		warn(fmt.Sprintf("%s is tracked by the project's git repository, so it came with the project and is no record of what agentpack wrote on this machine; treating it as missing (untrack it with `git rm --cached` and run `agentpack doctor --fix` to ignore it)", p))
		return nil
	}
	m, fi := cache.sharedManifest(p, share)
	if m == nil {
		var ok bool
		if m, ok = parseTargetManifest(sys, p, warn); !ok {
			if fi != nil {
				cache.recordManifest(p, fi, nil) // damaged since it was cached
			}
			return nil
		}
		shareStrings(m, share)
		// fi was taken before the read: a write racing it leaves stat data
		// that no longer matches, never new stat data naming old bytes.
		cache.recordManifest(p, fi, m)
	}
	if m.SchemaVersion != TargetManifestSchemaVersion {
		warn(fmt.Sprintf("%s has schema_version %d (want %d); treating it as missing", p, m.SchemaVersion, TargetManifestSchemaVersion))
		return nil
	}
	kept := m.ManagedFiles[:0]
	for _, f := range m.ManagedFiles {
		if !SafeRelPath(f.Path) {
			warn(fmt.Sprintf("%s lists %q, which leaves its root; entry ignored", p, f.Path))
			continue
		}
		if kl := f.key(); kl.Format != "" && (!cfgedit.Format(kl.Format).Valid() || len(kl.Container) == 0) {
			warn(fmt.Sprintf("%s lists %q with an unknown key-level format %q; entry ignored", p, f.Path, kl.Format))
			continue
		}
		kept = append(kept, f)
	}
	m.ManagedFiles = kept
	return m
}

// shareStrings makes the paths, hashes and module ids of m's files the
// desired state's strings where they are equal (share may be nil), so the
// strings JSON decoding made for them (10 MB for 100,000 files) are
// garbage once the manifest is cached.
func shareStrings(m *TargetManifest, share *sharer) {
	if share == nil {
		return
	}
	for i := range m.ManagedFiles {
		f := &m.ManagedFiles[i]
		d := sharedFile(share, f.Path)
		if d == nil {
			continue
		}
		if rel := string(d.Path[len(share.root)+1:]); rel == f.Path {
			f.Path = rel
		}
		if d.SHA256 == f.SHA256 {
			f.SHA256 = d.SHA256
		}
		for j, id := range f.ModuleIDs {
			if j < len(d.ModuleIDs) && d.ModuleIDs[j] == id {
				f.ModuleIDs[j] = d.ModuleIDs[j]
			}
		}
	}
}

// parseTargetManifest reads and parses p; ok is false when it is missing,
// unreadable or not JSON (with a warning for the last two).
func parseTargetManifest(sys fsys.System, p fsys.AbsPath, warn func(string)) (*TargetManifest, bool) {
	data, err := sys.ReadFile(p)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			warn(fmt.Sprintf("%s; treating it as missing", apperr.As(err).Message))
		}
		return nil, false
	}
	// Room for every entry at once (one "path" key each): decoding grows
	// the slice by doubling otherwise, and a manifest of 10,000 files would
	// end in an array with room for thousands more.
	var m TargetManifest
	if n := min(bytes.Count(data, []byte(`"path"`)), len(data)/64); n > 0 {
		m.ManagedFiles = make([]ManagedFile, 0, n)
	}
	if err := json.Unmarshal(data, &m); err != nil {
		warn(fmt.Sprintf("%s is not valid JSON (%v); treating it as missing", p, err))
		return nil, false
	}
	return &m, true
}

// SafeRelPath accepts a clean relative '/' path that stays inside its root,
// as every entry of a [TargetManifest] must be.
func SafeRelPath(p string) bool {
	if p == "" || strings.HasPrefix(p, "/") || strings.Contains(p, `\`) || filepath.IsAbs(p) {
		return false
	}
	c := path.Clean(p)
	return c == p && c != "." && c != ".." && !strings.HasPrefix(c, "../")
}

// RenderTargetManifest builds manifest bytes for a root.
func RenderTargetManifest(target, snapshotID, profile, repo string, now time.Time, files []ManagedFile) []byte {
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return RenderTargetManifestOf(target, snapshotID, profile, repo, now, len(files), func(i int) ManagedFile { return files[i] })
}

// RenderTargetManifestOf is [RenderTargetManifest] of n files sorted by
// path, made one at a time by file(i) (called more than once for each),
// so no list of them is held: a deploy renders a root's manifest straight
// from its desired files. The bytes are what encoding/json writes (two-space
// indents, HTML escaped); an entry is written without reflection unless it
// is a key-level file's, and the result is allocated once, at its size.
func RenderTargetManifestOf(target, snapshotID, profile, repo string, now time.Time, n int, file func(i int) ManagedFile) []byte {
	m, head, fast := manifestHead(target, snapshotID, profile, repo, now, n)
	if !fast {
		return renderReflected(m, head, n, file)
	}
	size := len(head) + len(manifestTail)
	for i := range n {
		f := file(i)
		size += len(",\n    ") + managedFileSize(&f)
	}
	out := make([]byte, 0, size)
	out = append(out, head...)
	for i := range n {
		f := file(i)
		out = appendManifestEntry(out, i, &f)
	}
	return append(out, manifestTail...)
}

// WriteTargetManifestOf writes to w the bytes [RenderTargetManifestOf]
// returns, holding only a buffer of them: a manifest of 100,000 files is
// 18 MB that a deploy saves in its snapshot's pack and writes, never holds.
func WriteTargetManifestOf(w io.Writer, target, snapshotID, profile, repo string, now time.Time, n int, file func(i int) ManagedFile) error {
	m, head, fast := manifestHead(target, snapshotID, profile, repo, now, n)
	if !fast {
		_, err := w.Write(renderReflected(m, head, n, file))
		return err
	}
	const flushAt = 32 << 10
	buf := make([]byte, 0, flushAt+4<<10)
	buf = append(buf, head...)
	for i := range n {
		f := file(i)
		if buf = appendManifestEntry(buf, i, &f); len(buf) >= flushAt {
			if _, err := w.Write(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
	}
	_, err := w.Write(append(buf, manifestTail...))
	return err
}

// DecodedManifestOf is what the manifest cache keeps of the manifest
// [WriteTargetManifestOf] writes with the same arguments: what parsing
// its text gives, made without the text, so a deploy can record the
// manifest it writes ([StatCache.RecordManifest]). ok is false when an
// entry has a string that is not UTF-8 (JSON replaces its bytes): such a
// manifest is left to be parsed.
func DecodedManifestOf(target, snapshotID, profile, repo string, now time.Time, n int, file func(i int) ManagedFile) (decoded []byte, ok bool) {
	m, _, _ := manifestHead(target, snapshotID, profile, repo, now, n)
	ok = utf8.ValidString(snapshotID) && utf8.ValidString(profile) && utf8.ValidString(repo)
	decoded = encodeManifestOf(&m, n, false, func(i int) ManagedFile {
		f, valid := asParsed(file(i))
		ok = ok && valid
		return f
	})
	if !ok {
		return nil, false
	}
	return decoded, true
}

// asParsed is f as parsing its JSON gives it back: lists the text leaves
// out when empty are nil, and so is a KeyLevel with nothing set. valid is
// false when a string of f is not UTF-8.
func asParsed(f ManagedFile) (out ManagedFile, valid bool) {
	valid = utf8.ValidString(f.Path) && utf8.ValidString(f.SHA256) && utf8.ValidString(f.OwnedSHA256) && validUTF8(f.ModuleIDs)
	out = ManagedFile{Path: f.Path, SHA256: f.SHA256, OwnedSHA256: f.OwnedSHA256, ModuleIDs: nilIfEmpty(f.ModuleIDs)}
	if !f.keyLevel() {
		return out, valid
	}
	kl := *f.KeyLevel
	valid = valid && utf8.ValidString(kl.Format) && validUTF8(kl.Container)
	kl.Container = nilIfEmpty(kl.Container)
	if len(kl.Entries) == 0 {
		kl.Entries = nil
	} else {
		entries := make([]ManagedEntry, len(kl.Entries))
		for i, e := range kl.Entries {
			valid = valid && utf8.ValidString(e.Name) && utf8.ValidString(e.SHA256) && validUTF8(e.ModuleIDs)
			entries[i] = ManagedEntry{Name: e.Name, SHA256: e.SHA256, ModuleIDs: nilIfEmpty(e.ModuleIDs)}
		}
		kl.Entries = entries
	}
	out.KeyLevel = &kl
	return out, valid
}

func nilIfEmpty(ss []string) []string {
	if len(ss) == 0 {
		return nil
	}
	return ss
}

func validUTF8(ss []string) bool {
	for _, s := range ss {
		if !utf8.ValidString(s) {
			return false
		}
	}
	return true
}

// manifestTail closes managed_files and the document.
const manifestTail = "\n  ]\n}\n"

// manifestHead is a manifest of no entries and its text up to its first
// entry, "[" included, with fast true; or, when there is no entry or
// encoding/json's text does not end as expected, the whole text with fast
// false.
func manifestHead(target, snapshotID, profile, repo string, now time.Time, n int) (TargetManifest, []byte, bool) {
	m := TargetManifest{
		SchemaVersion: TargetManifestSchemaVersion,
		GeneratedAt:   now.UTC().Format(time.RFC3339),
		Tool:          target,
		SnapshotID:    snapshotID,
		Profile:       profile,
		Repo:          repo,
		ManagedFiles:  []ManagedFile{},
	}
	var head bytes.Buffer
	enc := json.NewEncoder(&head)
	enc.SetIndent("", "  ")
	_ = enc.Encode(m)
	doc := head.Bytes()
	const empty = "[]\n}\n" // the document ends with its empty managed_files
	if n == 0 || !bytes.HasSuffix(doc, []byte(empty)) {
		return m, doc, false
	}
	return m, append(doc[:len(doc)-len(empty)], '['), true
}

// renderReflected is m, whose text is doc, with the n entries of file,
// encoded by reflection: the slow way, for a text encoding/json did not
// end as expected.
func renderReflected(m TargetManifest, doc []byte, n int, file func(i int) ManagedFile) []byte {
	if n == 0 {
		return doc
	}
	m.ManagedFiles = make([]ManagedFile, n)
	for i := range m.ManagedFiles {
		m.ManagedFiles[i] = file(i)
	}
	var buf bytes.Buffer
	_ = jsonstream.Encode(&buf, m, jsonstream.Options{Indent: "  ", EscapeHTML: true})
	return buf.Bytes()
}

// appendManifestEntry appends the i-th entry f of managed_files.
func appendManifestEntry(out []byte, i int, f *ManagedFile) []byte {
	if i > 0 {
		out = append(out, ',')
	}
	out = append(out, "\n    "...)
	return appendManagedFile(out, f)
}

// keyLevel reports whether f says anything of a key-level file (then it
// is encoded by encoding/json, not [appendManagedFile]'s fast path).
func (f *ManagedFile) keyLevel() bool {
	kl := f.KeyLevel
	return kl != nil && (kl.Format != "" || len(kl.Container) > 0 || len(kl.Entries) > 0 || kl.Created)
}

// appendManagedFile appends f as encoding/json writes it as an element of
// a manifest's managed_files (its fields indented by six spaces).
func appendManagedFile(out []byte, f *ManagedFile) []byte {
	if f.keyLevel() {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetIndent("    ", "  ")
		_ = enc.Encode(f)
		return append(out, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
	}
	out = append(out, mfPath...)
	out = appendJSONString(out, f.Path)
	out = append(out, mfSHA256...)
	out = appendJSONString(out, f.SHA256)
	if f.OwnedSHA256 != "" {
		out = append(out, mfOwned...)
		out = appendJSONString(out, f.OwnedSHA256)
	}
	if len(f.ModuleIDs) > 0 {
		out = append(out, mfIDs...)
		for i, id := range f.ModuleIDs {
			if i > 0 {
				out = append(out, ',')
			}
			out = append(out, mfID...)
			out = appendJSONString(out, id)
		}
		out = append(out, mfIDsEnd...)
	}
	return append(out, mfEnd...)
}

// The fixed text of a whole file's entry ([appendManagedFile]).
const (
	mfPath   = "{\n      \"path\": "
	mfSHA256 = ",\n      \"sha256\": "
	mfOwned  = ",\n      \"owned_sha256\": "
	mfIDs    = ",\n      \"module_ids\": ["
	mfID     = "\n        "
	mfIDsEnd = "\n      ]"
	mfEnd    = "\n    }"
)

// managedFileSize is the length of f's entry, exact unless a string needs
// escaping or f is a key-level file's (then about it).
func managedFileSize(f *ManagedFile) int {
	n := len(mfPath) + len(f.Path) + len(mfSHA256) + len(f.SHA256) + len(mfEnd) + 4
	if f.OwnedSHA256 != "" {
		n += len(mfOwned) + len(f.OwnedSHA256) + 2
	}
	if len(f.ModuleIDs) > 0 {
		n += len(mfIDs) + len(mfIDsEnd)
		for _, id := range f.ModuleIDs {
			n += len(mfID) + len(id) + 3
		}
	}
	if f.keyLevel() {
		n += 256 + 128*len(f.KeyLevel.Entries)
	}
	return n
}

// appendJSONString appends s as encoding/json writes a string with HTML
// escaping: as it is, quoted, when no byte needs escaping.
func appendJSONString(out []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(s)
			return append(out, b...)
		}
	}
	out = append(out, '"')
	out = append(out, s...)
	return append(out, '"')
}
