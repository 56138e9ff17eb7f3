package snapshots

import (
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/checksum"
)

// Contents reads the saved bytes of records' changes: whole from a pack,
// or, for a [Content] saved as a delta, rebuilt from its base — bytes the
// disk still holds or another change of the same path in these records.
// A rollback reads the records it restores from once; the deltas between
// them then chain back to what is on disk.
type Contents struct {
	store *Store
	// byPath is every content recorded for a path, with its record's id.
	byPath map[fileKey][]savedContent
	// built memoises rebuilt bytes by SHA-256.
	built map[string][]byte
}

type savedContent struct {
	id string
	c  *Content
}

// Contents returns a reader of the saved bytes of records.
func (s *Store) Contents(records []*Record) *Contents {
	cs := &Contents{store: s, byPath: map[fileKey][]savedContent{}, built: map[string][]byte{}}
	for _, r := range records {
		cs.Add(r.ID, r.Files)
	}
	return cs
}

// Add makes the changes of snapshot id (a record's or a journal's files)
// available as bases.
func (cs *Contents) Add(id string, files []FileChange) {
	for _, f := range files {
		k := fileKey{f.Target, f.Path}
		for _, c := range []*Content{f.Before, f.After} {
			if c != nil {
				cs.byPath[k] = append(cs.byPath[k], savedContent{id, c})
			}
		}
	}
}

// Read returns the bytes of c, saved by snapshot id for (target, path), and
// checks their hash. disk is what the path holds now (nil when it does not
// exist): the anchor a chain of deltas is rebuilt from. Missing or damaged
// bytes are E_SNAPSHOT_CORRUPTED.
func (cs *Contents) Read(target, path, id string, c *Content, disk []byte) ([]byte, error) {
	if c.Delta == nil {
		return cs.store.ReadBlob(id, c.SHA256)
	}
	if disk != nil {
		cs.built[checksum.SHA256Hex(disk)] = disk
	}
	k := fileKey{target, path}
	cs.byPath[k] = append(cs.byPath[k], savedContent{id, c})
	data, err := cs.resolve(k, c.SHA256, map[string]bool{})
	if err != nil {
		return nil, blobCorrupted(id, c.SHA256, "", "snapshot %s saved %s as a change against other bytes of it (%s) that neither the disk nor another snapshot holds any more: %v", id, path, c.Delta.Base, err).
			WithHint("put back %s as the newest snapshot left it, or roll back to a newer snapshot", path)
	}
	return data, nil
}

// resolve finds the bytes with hash sha for the path: rebuilt before, on
// disk, saved whole, or rebuilt from a delta whose base resolves in turn.
func (cs *Contents) resolve(k fileKey, sha string, visiting map[string]bool) ([]byte, error) {
	if data, ok := cs.built[sha]; ok {
		return data, nil
	}
	if visiting[sha] {
		return nil, errBadDelta
	}
	visiting[sha] = true
	defer delete(visiting, sha)
	err := error(apperr.New(apperr.SnapshotCorrupted, "no saved bytes %s", sha))
	for _, whole := range []bool{true, false} {
		for _, s := range cs.byPath[k] {
			if s.c.SHA256 != sha || (s.c.Delta == nil) != whole {
				continue
			}
			var data []byte
			if whole {
				data, err = cs.store.ReadBlob(s.id, sha)
			} else {
				data, err = cs.rebuild(k, s, visiting)
			}
			if err == nil {
				cs.built[sha] = data
				return data, nil
			}
		}
	}
	return nil, err
}

// rebuild applies s's delta to its base.
func (cs *Contents) rebuild(k fileKey, s savedContent, visiting map[string]bool) ([]byte, error) {
	base, err := cs.resolve(k, s.c.Delta.Base, visiting)
	if err != nil {
		return nil, err
	}
	delta, err := cs.store.ReadBlob(s.id, s.c.Delta.SHA256)
	if err != nil {
		return nil, err
	}
	data, err := ApplyDelta(base, delta)
	if err == nil && checksum.SHA256Hex(data) != s.c.SHA256 {
		err = errBadDelta
	}
	if err != nil {
		return nil, blobCorrupted(s.id, s.c.SHA256, cs.store.blobDir(s.id).JoinName(packName), "saved bytes %s of snapshot %s do not rebuild from their delta: %v", s.c.SHA256, s.id, err)
	}
	return data, nil
}
