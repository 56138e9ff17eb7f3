package snapshots

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/agentpack/agentpack/internal/apperr"
)

// Journal describes an apply in flight (SPEC §6). It is written before any
// target file and removed after the snapshot record, so it survives only
// while an apply runs or after a crash; the next command rolls the partial
// apply back from it.
type Journal struct {
	// ID is the snapshot id being applied.
	ID        string    `json:"id"`
	Command   string    `json:"command"`
	PID       int       `json:"pid"`
	StartedAt time.Time `json:"started_at"`
	// Files lists every path that may be touched, with its Before.
	Files []FileChange `json:"files"`
}

func (s *Store) journalPath() string { return filepath.Join(s.dir, "journal.json") }

// WriteJournal writes j to state/journal.json atomically (fsyncing the file,
// and the folder too when AGENTPACK_FSYNC=1).
func (s *Store) WriteJournal(j *Journal) error {
	if err := checkID(j.ID); err != nil {
		return err
	}
	c := *j
	if c.Files == nil {
		c.Files = []FileChange{}
	}
	data, err := json.MarshalIndent(&c, "", "  ")
	if err != nil {
		return apperr.Wrap(err, apperr.Unexpected, "cannot encode the journal")
	}
	return writeState(s.journalPath(), append(data, '\n'))
}

// ReadJournal returns the journal, or nil, nil when there is none. A journal
// that cannot be read or parsed is E_IO_FAILED, with a hint to remove it once
// the user has checked the files it names.
func (s *Store) ReadJournal() (*Journal, error) {
	path := s.journalPath()
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err == nil {
		var j Journal
		if err = json.Unmarshal(data, &j); err == nil {
			if err = checkID(j.ID); err == nil {
				return &j, nil
			}
		}
	}
	return nil, apperr.Wrap(err, apperr.IOFailed, "cannot read the apply journal %s", path).
		WithHint("remove %s after checking your files", path).
		With("path", path)
}

// RemoveJournal removes state/journal.json; a missing journal is fine.
func (s *Store) RemoveJournal() error {
	return removeState(s.journalPath())
}
