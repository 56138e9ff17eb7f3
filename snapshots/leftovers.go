package snapshots

import (
	"slices"
	"strings"

	"github.com/agentpack/agentpack/internal/fsys"
)

// Leftovers are what crashed writes leave in the state folder: blob folders
// with no record and no journal naming them (an apply that died before its
// journal), and the temp files of interrupted atomic writes.
type Leftovers struct {
	// Orphans are snapshot ids whose blob folder has no record.
	Orphans []string
	// TempFiles are absolute paths of temp files.
	TempFiles []string
}

// Empty reports whether there is nothing to clean.
func (l Leftovers) Empty() bool { return len(l.Orphans) == 0 && len(l.TempFiles) == 0 }

// FindLeftovers lists the leftovers; the id of the journal in flight (if
// any) is never an orphan.
func (s *Store) FindLeftovers() (Leftovers, error) {
	var out Leftovers
	inFlight := ""
	if j, err := s.ReadJournal(); err == nil && j != nil {
		inFlight = j.ID
	}
	records, dirs, err := s.scan()
	if err != nil {
		return out, err
	}
	for id := range dirs {
		if id != inFlight && !slices.Contains(records, id) {
			out.Orphans = append(out.Orphans, id)
		}
	}
	slices.Sort(out.Orphans)
	for _, dir := range append([]fsys.AbsPath{s.dir, s.snapshotsDir()}, s.blobDirs(dirs)...) {
		entries, _ := s.sys.ReadDir(dir)
		for _, e := range entries {
			if isTempName(e.Name()) {
				out.TempFiles = append(out.TempFiles, dir.JoinName(e.Name()).String())
			}
		}
	}
	return out, nil
}

func (s *Store) blobDirs(ids map[string]bool) []fsys.AbsPath {
	out := make([]fsys.AbsPath, 0, len(ids))
	for id := range ids {
		out = append(out, s.blobDir(id))
	}
	slices.Sort(out)
	return out
}

// isTempName matches the temp files of [fsys.RealSystem.WriteFile]
// (".agentpack-tmp-<n>") and those of the writer that came before it
// (".<name>.tmp<n>").
func isTempName(name string) bool {
	return strings.HasPrefix(name, fsys.TempPrefix) ||
		strings.HasPrefix(name, ".") && strings.Contains(name, ".tmp")
}

// CleanLeftovers removes what [Store.FindLeftovers] lists and returns it.
func (s *Store) CleanLeftovers() (Leftovers, error) {
	l, err := s.FindLeftovers()
	if err != nil {
		return l, err
	}
	for _, id := range l.Orphans {
		if err := s.sys.RemoveAll(s.blobDir(id)); err != nil {
			return l, ioError(err, "cannot remove saved bytes of snapshot %s", id)
		}
	}
	for _, p := range l.TempFiles {
		// FindLeftovers built p from a typed path; a missing file is fine.
		if err := s.sys.Remove(fsys.AbsPath(p)); err != nil {
			return l, err
		}
	}
	return l, nil
}
