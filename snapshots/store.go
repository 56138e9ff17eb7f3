package snapshots

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/agentpack/agentpack/internal/jsonstream"
)

// IDLayout is the time layout of snapshot ids: UTC with nanoseconds, so ids
// sort lexically in the order they were made.
const IDLayout = "20060102T150405.000000000Z"

// Store reads and writes snapshot records, their saved bytes and the journal
// under one state directory (e.g. $AGENTPACK_HOME/state), every byte through
// a [fsys.System]. It is safe for concurrent use by goroutines; separate
// processes must hold [Lock] to write.
type Store struct {
	sys fsys.System
	// durable is sys's [fsys.Durable] version, for the journal.
	durable fsys.System
	dir     fsys.AbsPath

	mu   sync.Mutex
	last time.Time // newest id this Store handed out

	packs  sync.Map // id → packIndex, read again ([Store.packIndex])
	packMu sync.Mutex
}

// NewStore returns a Store rooted at stateDir on the real disk, which
// fsyncs state writes when AGENTPACK_FSYNC=1 (read now) and the journal
// always. A relative stateDir is resolved against the working directory.
// Nothing is created until the first write.
func NewStore(stateDir string) *Store {
	return NewStoreOn(stateSystem(), stateDirPath(stateDir))
}

// NewStoreOn returns a Store rooted at dir that reads and writes only
// through sys, and writes the journal through [fsys.Durable](sys). Nothing
// is created until the first write.
func NewStoreOn(sys fsys.System, dir fsys.AbsPath) *Store {
	return &Store{sys: sys, durable: fsys.Durable(sys), dir: dir}
}

// Dir returns the state directory of s.
func (s *Store) Dir() string { return s.dir.String() }

func (s *Store) snapshotsDir() fsys.AbsPath        { return s.dir.JoinName("snapshots") }
func (s *Store) recordPath(id string) fsys.AbsPath { return s.snapshotsDir().JoinName(id + ".json") }
func (s *Store) blobDir(id string) fsys.AbsPath    { return s.snapshotsDir().JoinName(id) }
func (s *Store) blobPath(id, sha string) fsys.AbsPath {
	return s.blobDir(id).JoinName(sha)
}

// NewID returns a fresh snapshot id for now, formatted with [IDLayout]. Ids
// only grow: if now is not after the newest existing id (a clock that went
// back) or an id this Store already handed out, the id is that one plus 1ns;
// if a record or blob folder with the id exists, 1ns is added until it is
// free.
func (s *Store) NewID(now time.Time) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := now.UTC().Round(0)
	if newest, ok := s.newestIDTime(); ok && !t.After(newest) {
		t = newest.Add(time.Nanosecond)
	}
	if !s.last.IsZero() && !t.After(s.last) {
		t = s.last.Add(time.Nanosecond)
	}
	for {
		id := t.Format(IDLayout)
		if !s.exists(s.recordPath(id)) && !s.exists(s.blobDir(id)) {
			s.last = t
			return id
		}
		t = t.Add(time.Nanosecond)
	}
}

// newestIDTime returns the time of the newest id-shaped record or blob folder.
func (s *Store) newestIDTime() (time.Time, bool) {
	entries, _ := s.sys.ReadDir(s.snapshotsDir())
	var newest time.Time
	for _, e := range entries {
		t, err := time.Parse(IDLayout, strings.TrimSuffix(e.Name(), ".json"))
		if err == nil && t.After(newest) {
			newest = t
		}
	}
	return newest, !newest.IsZero()
}

func (s *Store) exists(path fsys.AbsPath) bool {
	_, err := s.sys.Lstat(path)
	return err == nil
}

// Save writes r to snapshots/<id>.json atomically as indented JSON, with
// Files sorted by (Target, Path) and Targets sorted. r itself is not changed.
// Save refuses a record that fails [Record.Validate].
func (s *Store) Save(r *Record) error {
	return s.SaveFiles(r, FilesOf(r.Files))
}

// SaveFiles is [Store.Save] of r with files as its Files (r.Files is not
// read): files made one at a time as they are checked and written, so a
// record of 100,000 files is saved without a list of them.
func (s *Store) SaveFiles(r *Record, files Files) error {
	if err := checkID(r.ID); err != nil {
		return err
	}
	c := *r
	c.Files = nil
	err := c.Validate()
	if err == nil {
		if err = files.validate(); errors.Is(err, errFilesUnsorted) {
			list := files.collect()
			slices.SortFunc(list, compareFiles)
			files = FilesOf(list)
			err = files.validate()
		}
	}
	if err != nil {
		return apperr.Wrap(err, apperr.Unexpected, "refusing to save invalid snapshot record %s", r.ID)
	}
	c.SchemaVersion = RecordSchemaVersion
	c.Targets = slices.Sorted(slices.Values(r.Targets))
	if c.Targets == nil {
		c.Targets = []string{}
	}
	c.Files = []FileChange{}
	return s.writeJSON(s.sys, s.recordPath(r.ID), &c, files)
}

// writeJSON writes v to path through sys atomically as indented JSON and
// a newline (what json.MarshalIndent gives), with mode 0600, encoding a
// record's files one by one instead of the whole document at once: files,
// v's Files, are made as they are written.
func (s *Store) writeJSON(sys fsys.System, path fsys.AbsPath, v any, files Files) error {
	if err := ensureDir(sys, path.Dir()); err != nil {
		return err
	}
	opts := jsonstream.Options{Indent: "  ", EscapeHTML: true,
		Arrays: []jsonstream.Array{{Path: []string{"files"}, N: files.N, Elem: files.elems()}}}
	return fsys.WriteStream(sys, path, filePerm, func(w io.Writer) error {
		if err := jsonstream.Encode(w, v, opts); err != nil {
			return apperr.Wrap(err, apperr.Unexpected, "cannot encode %s", path)
		}
		return nil
	})
}

func compareFiles(a, b FileChange) int { return CompareFiles(a.Target, a.Path, b.Target, b.Path) }

// CompareFiles orders the file at pathA of targetA and the one at pathB
// of targetB as a record lists them: by target, then path.
func CompareFiles(targetA, pathA, targetB, pathB string) int {
	if c := strings.Compare(targetA, targetB); c != 0 {
		return c
	}
	return strings.Compare(pathA, pathB)
}

// Load reads the record with the given id. An unknown id is
// E_SNAPSHOT_NOT_FOUND, an unreadable or invalid record E_SNAPSHOT_CORRUPTED,
// and an id that could escape the snapshots folder E_INVALID_ARGUMENT.
func (s *Store) Load(id string) (*Record, error) { return s.loadEach(id, nil, false) }

// loadEach is [Store.Load] that, when each is not nil, hands each file
// of the record, once checked, to each (with its index i and how many
// files the record is expected to hold), and keeps in Files only those
// each returns true for: a caller that needs a few of 100,000 files never
// holds them all. A file is handed over before the whole record is
// checked; if the record turns out damaged, loadEach fails. The files are
// handed over again from i == 0 when a record's files are out of order.
// Unless sized, files is 0 until then: the record is not read first to
// count them.
func (s *Store) loadEach(id string, each func(f *FileChange, i, files int) bool, sized bool) (*Record, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	path := s.recordPath(id)
	var check func(*FileChange, int) (bool, error)
	if each != nil {
		check = checkedFiles(each)
	}
	r, err := readRecord(s.sys, path, check, sized)
	if errors.Is(err, errUnsorted) {
		// Not as Save writes records: checked whole, then handed over.
		if r, err = s.loadEach(id, nil, false); err != nil {
			return nil, err
		}
		kept := r.Files[:0]
		for i := range r.Files {
			if each(&r.Files[i], i, len(r.Files)) {
				kept = append(kept, r.Files[i])
			}
		}
		r.Files = slices.Clip(kept)
		return r, nil
	}
	if readErr := (errRecordRead{}); errors.As(err, &readErr) {
		if errors.Is(readErr.err, fs.ErrNotExist) {
			return nil, apperr.New(apperr.SnapshotNotFound, "snapshot %s not found", id).
				WithHint("run `agentpack snapshots` to list snapshot ids").
				With("id", id)
		}
		return nil, ioError(readErr.err, "cannot read snapshot %s", id)
	}
	if err != nil {
		return nil, corrupted(id, path, err)
	}
	if r.ID != id {
		return nil, corrupted(id, path, fmt.Errorf("record says its id is %q", r.ID))
	}
	if err := r.Validate(); err != nil {
		return nil, corrupted(id, path, err)
	}
	return r, nil
}

// errUnsorted is a record whose files are not sorted as Save sorts them.
var errUnsorted = errors.New("files not sorted")

// checkedFiles checks each file as [Record.Validate] does before handing
// it to each; files out of order are errUnsorted.
func checkedFiles(each func(*FileChange, int, int) bool) func(*FileChange, int) (bool, error) {
	i := 0
	var prev FileChange
	return func(f *FileChange, files int) (bool, error) {
		if err := f.validate(); err != nil {
			return false, fmt.Errorf("file %d (%s): %w", i, f.Path, err)
		}
		if i > 0 {
			switch c := compareFiles(prev, *f); {
			case c == 0:
				return false, fmt.Errorf("file %s of target %s is listed twice", f.Path, f.Target)
			case c > 0:
				return false, errUnsorted
			}
		}
		prev = FileChange{Target: f.Target, Path: f.Path}
		i++
		return each(f, i-1, files), nil
	}
}

func corrupted(id string, path fsys.AbsPath, err error) *apperr.Error {
	return apperr.Wrap(err, apperr.SnapshotCorrupted, "snapshot record %s is corrupted", id).
		WithHint("move %s aside, or pick another snapshot with `agentpack snapshots`", path).
		With("id", id).
		With("path", path.String())
}

// List returns every readable record, oldest first. A record that cannot be
// read is skipped and named in warnings ("snapshot <id> skipped: <why>"); err
// is only for a snapshots folder that cannot be listed.
func (s *Store) List() (records []Listed, warnings []string, err error) {
	ids, err := s.recordIDs()
	if err != nil {
		return nil, nil, err
	}
	records = make([]Listed, 0, len(ids))
	for _, id := range ids {
		n := 0
		r, err := s.loadEach(id, func(f *FileChange, i, _ int) bool {
			if i == 0 {
				n = 0 // handed over again from the start
			}
			if !f.Manifest {
				n++
			}
			return false
		}, false)
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("snapshot %s skipped: %v", id, err))
			continue
		}
		records = append(records, Listed{Record: r, TargetFiles: n})
	}
	return records, warnings, nil
}

// Listed is a record as [Store.List] gives it: without its files, which
// it counts. A list of twenty deploys of 10,000 files held 200,000 of
// them to count them.
type Listed struct {
	*Record
	// TargetFiles is how many of its files are target files: not
	// manifests or agentpack's state files.
	TargetFiles int
}

// Latest returns the newest readable record, or nil, nil when there is none.
func (s *Store) Latest() (*Record, error) {
	ids, err := s.recordIDs()
	if err != nil {
		return nil, err
	}
	for i := len(ids) - 1; i >= 0; i-- {
		if r, err := s.Load(ids[i]); err == nil {
			return r, nil
		}
	}
	return nil, nil
}

// recordIDs returns the ids of all record files, sorted (oldest first).
func (s *Store) recordIDs() ([]string, error) {
	ids, _, err := s.scan()
	return ids, err
}
