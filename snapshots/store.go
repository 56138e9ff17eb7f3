package snapshots

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentpack/agentpack/internal/apperr"
)

// IDLayout is the time layout of snapshot ids: UTC with nanoseconds, so ids
// sort lexically in the order they were made.
const IDLayout = "20060102T150405.000000000Z"

// Store reads and writes snapshot records, their saved bytes and the journal
// under one state directory (e.g. $AGENTPACK_HOME/state). It is safe for
// concurrent use by goroutines; separate processes must hold [Lock] to write.
type Store struct {
	dir string

	mu   sync.Mutex
	last time.Time // newest id this Store handed out

	packs sync.Map // id → packIndex, read once
}

// NewStore returns a Store rooted at stateDir. Nothing is created until the
// first write.
func NewStore(stateDir string) *Store {
	return &Store{dir: stateDir}
}

// Dir returns the state directory of s.
func (s *Store) Dir() string { return s.dir }

func (s *Store) snapshotsDir() string           { return filepath.Join(s.dir, "snapshots") }
func (s *Store) recordPath(id string) string    { return filepath.Join(s.snapshotsDir(), id+".json") }
func (s *Store) blobDir(id string) string       { return filepath.Join(s.snapshotsDir(), id) }
func (s *Store) blobPath(id, sha string) string { return filepath.Join(s.blobDir(id), sha) }

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
		if !exists(s.recordPath(id)) && !exists(s.blobDir(id)) {
			s.last = t
			return id
		}
		t = t.Add(time.Nanosecond)
	}
}

// newestIDTime returns the time of the newest id-shaped record or blob folder.
func (s *Store) newestIDTime() (time.Time, bool) {
	entries, _ := os.ReadDir(s.snapshotsDir())
	var newest time.Time
	for _, e := range entries {
		t, err := time.Parse(IDLayout, strings.TrimSuffix(e.Name(), ".json"))
		if err == nil && t.After(newest) {
			newest = t
		}
	}
	return newest, !newest.IsZero()
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// Save writes r to snapshots/<id>.json atomically as indented JSON, with
// Files sorted by (Target, Path) and Targets sorted. r itself is not changed.
// Save refuses a record that fails [Record.Validate].
func (s *Store) Save(r *Record) error {
	if err := checkID(r.ID); err != nil {
		return err
	}
	if err := r.Validate(); err != nil {
		return apperr.Wrap(err, apperr.Unexpected, "refusing to save invalid snapshot record %s", r.ID)
	}
	c := *r
	c.Targets = slices.Sorted(slices.Values(r.Targets))
	if c.Targets == nil {
		c.Targets = []string{}
	}
	c.Files = slices.Clone(r.Files)
	if c.Files == nil {
		c.Files = []FileChange{}
	}
	slices.SortFunc(c.Files, compareFiles)
	data, err := json.MarshalIndent(&c, "", "  ")
	if err != nil {
		return apperr.Wrap(err, apperr.Unexpected, "cannot encode snapshot record %s", r.ID)
	}
	return writeState(s.recordPath(r.ID), append(data, '\n'))
}

func compareFiles(a, b FileChange) int {
	if c := strings.Compare(a.Target, b.Target); c != 0 {
		return c
	}
	return strings.Compare(a.Path, b.Path)
}

// Load reads the record with the given id. An unknown id is
// E_SNAPSHOT_NOT_FOUND, an unreadable or invalid record E_SNAPSHOT_CORRUPTED,
// and an id that could escape the snapshots folder E_INVALID_ARGUMENT.
func (s *Store) Load(id string) (*Record, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	path := s.recordPath(id)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, apperr.New(apperr.SnapshotNotFound, "snapshot %s not found", id).
			WithHint("run `agentpack snapshots` to list snapshot ids").
			With("id", id)
	}
	if err != nil {
		return nil, ioError(err, "cannot read snapshot %s", id)
	}
	var r Record
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, corrupted(id, path, err)
	}
	if r.ID != id {
		return nil, corrupted(id, path, fmt.Errorf("record says its id is %q", r.ID))
	}
	if err := r.Validate(); err != nil {
		return nil, corrupted(id, path, err)
	}
	return &r, nil
}

func corrupted(id, path string, err error) *apperr.Error {
	return apperr.Wrap(err, apperr.SnapshotCorrupted, "snapshot record %s is corrupted", id).
		WithHint("move %s aside, or pick another snapshot with `agentpack snapshots`", path).
		With("id", id).
		With("path", path)
}

// List returns every readable record, oldest first. A record that cannot be
// read is skipped and named in warnings ("snapshot <id> skipped: <why>"); err
// is only for a snapshots folder that cannot be listed.
func (s *Store) List() (records []*Record, warnings []string, err error) {
	ids, err := s.recordIDs()
	if err != nil {
		return nil, nil, err
	}
	records = make([]*Record, 0, len(ids))
	for _, id := range ids {
		r, err := s.Load(id)
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("snapshot %s skipped: %v", id, err))
			continue
		}
		records = append(records, r)
	}
	return records, warnings, nil
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
