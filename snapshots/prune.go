package snapshots

import (
	"errors"
	"io/fs"
	"slices"
	"strings"

	"github.com/agentpack/agentpack/internal/apperr"
)

// Prune keeps the newest keep records with their blob folders and removes
// the older ones (record first, so a crash leaves an orphan folder, never a
// record without its bytes). It also removes orphan blob folders that have no
// record and the temp files of interrupted writes. Nothing with the id of the
// current journal is touched. removed
// lists the ids whose record or folder went, sorted.
func (s *Store) Prune(keep int) (removed []string, err error) {
	if keep < 0 {
		return nil, apperr.New(apperr.InvalidArgument, "keep must be 0 or more, got %d", keep).With("keep", keep)
	}
	j, err := s.ReadJournal()
	if err != nil {
		return nil, err
	}
	inFlight := ""
	if j != nil {
		inFlight = j.ID
	}
	records, _, err := s.scan()
	if err != nil {
		return nil, err
	}
	gone := map[string]bool{}
	if drop := len(records) - keep; drop > 0 {
		for _, id := range records[:drop] {
			if id == inFlight {
				continue
			}
			if err := s.sys.Remove(s.recordPath(id)); err != nil {
				return sorted(gone), err
			}
			gone[id] = true // its folder is now an orphan: removed below
		}
	}
	// Folders with no record (crashed applies, the ones just dropped) and
	// temp files of interrupted writes go too.
	left, err := s.CleanLeftovers()
	for _, id := range left.Orphans {
		gone[id] = true
	}
	// Each removal went through the System, which fsyncs the folder when it
	// fsyncs at all.
	return sorted(gone), err
}

// scan returns the record ids (sorted) and the blob folder ids of the
// snapshots folder.
func (s *Store) scan() (records []string, dirs map[string]bool, err error) {
	entries, err := s.sys.ReadDir(s.snapshotsDir())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, ioError(err, "cannot list %s", s.snapshotsDir())
	}
	dirs = map[string]bool{}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() {
			if checkID(name) == nil {
				dirs[name] = true
			}
			continue
		}
		if id, ok := strings.CutSuffix(name, ".json"); ok && checkID(id) == nil {
			records = append(records, id)
		}
	}
	slices.Sort(records)
	return records, dirs, nil
}

func sorted(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for id := range set {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}
