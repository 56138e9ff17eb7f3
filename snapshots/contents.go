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
	// byPath is every content recorded for a path that has a content saved
	// as a delta, with its record's id: only such a content is rebuilt from
	// others of its path, and only manifests are saved as deltas, so a
	// rollback of 100,000 files indexes a few paths, not every one.
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
	cs.add(records)
	return cs
}

// Add makes the changes of snapshot id (a record's or a journal's files)
// available as bases. What is needed of files is copied: the caller may
// let go of them. A path none of these changes (nor those added before)
// saves as a delta is not kept, since nothing is rebuilt from it: add the
// changes that may serve as each other's bases in one call.
func (cs *Contents) Add(id string, files []FileChange) {
	cs.add([]*Record{{ID: id, Files: files}})
}

// add indexes the paths of records that have a delta, with each of their
// contents.
func (cs *Contents) add(records []*Record) {
	for _, r := range records {
		for i := range r.Files {
			if f := &r.Files[i]; hasDelta(f.Before) || hasDelta(f.After) {
				if k := (fileKey{f.Target, f.Path}); cs.byPath[k] == nil {
					cs.byPath[k] = []savedContent{}
				}
			}
		}
	}
	for _, r := range records {
		for i := range r.Files {
			f := &r.Files[i]
			k := fileKey{f.Target, f.Path}
			saved, ok := cs.byPath[k]
			if !ok {
				continue
			}
			for _, c := range []*Content{f.Before, f.After} {
				if c != nil {
					saved = append(saved, savedContent{r.ID, c})
				}
			}
			cs.byPath[k] = saved
		}
	}
}

func hasDelta(c *Content) bool { return c != nil && c.Delta != nil }

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
