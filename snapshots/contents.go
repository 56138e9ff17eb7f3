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
	// packs are the packs read so far, held open until [Contents.Close].
	packs openPacks
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

// Close lets go of the packs read so far, held open for the reads after
// them; reading again opens them again.
func (cs *Contents) Close() { cs.packs.close() }

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
		return cs.store.readBlob(id, c.SHA256, &cs.packs)
	}
	if disk != nil {
		cs.built[checksum.SHA256Hex(disk)] = disk
	}
	k := fileKey{target, path}
	cs.byPath[k] = append(cs.byPath[k], savedContent{id, c})
	data, err := cs.resolve(k, c.SHA256)
	if err != nil {
		return nil, blobCorrupted(id, c.SHA256, "", "snapshot %s saved %s as a change against other bytes of it (%s) that neither the disk nor another snapshot holds any more: %v", id, path, c.Delta.Base, err).
			WithHint("put back %s as the newest snapshot left it, or roll back to a newer snapshot", path)
	}
	return data, nil
}

// resolve finds the bytes with hash sha for the path: rebuilt before, on
// disk, saved whole, or rebuilt from a delta whose base resolves in turn.
// Which contents can be had is worked out first, forward from what is on
// hand ([Contents.routes]), and only then is one chain read and applied:
// a search backward from sha through every delta tried each path between
// the same few manifest versions again and again, which after a few dozen
// deploys and rollbacks that flip a manifest back and forth took minutes.
// A chain that fails to read or apply is left out and another is tried.
func (cs *Contents) resolve(k fileKey, sha string) ([]byte, error) {
	if data, ok := cs.built[sha]; ok {
		return data, nil
	}
	bad := map[savedContent]bool{}
	err := error(apperr.New(apperr.SnapshotCorrupted, "no saved bytes %s", sha))
	for {
		via := cs.routes(k, bad)
		if _, ok := via[sha]; !ok {
			return nil, err
		}
		var data []byte
		var failed savedContent
		if data, failed, err = cs.follow(via, sha); err == nil {
			return data, nil
		}
		bad[failed] = true
	}
}

// routes is, for every hash of the path's contents that can be had, the
// content that gives it: one saved whole, else a delta whose base can be
// had (bytes already rebuilt or on disk need none). Each is added only
// once its base is in, so following them never goes round in a circle.
func (cs *Contents) routes(k fileKey, bad map[savedContent]bool) map[string]savedContent {
	via := map[string]savedContent{}
	have := func(sha string) bool {
		_, built := cs.built[sha]
		_, ok := via[sha]
		return built || ok
	}
	for _, s := range cs.byPath[k] {
		if s.c.Delta == nil && !bad[s] && !have(s.c.SHA256) {
			via[s.c.SHA256] = s
		}
	}
	for grew := true; grew; {
		grew = false
		for _, s := range cs.byPath[k] {
			if s.c.Delta != nil && !bad[s] && !have(s.c.SHA256) && have(s.c.Delta.Base) {
				via[s.c.SHA256] = s
				grew = true
			}
		}
	}
	return via
}

// follow reads the bytes of sha along via, from the bytes on hand or
// saved whole through each delta, keeping each rebuilt step; on a failure
// it names the content that failed.
func (cs *Contents) follow(via map[string]savedContent, sha string) ([]byte, savedContent, error) {
	var chain []savedContent // sha's content first, down to the first with bytes
	for {
		if _, ok := cs.built[sha]; ok {
			break
		}
		s := via[sha]
		chain = append(chain, s)
		if s.c.Delta == nil {
			break
		}
		sha = s.c.Delta.Base
	}
	data := cs.built[sha]
	for i := len(chain) - 1; i >= 0; i-- {
		s := chain[i]
		var err error
		if s.c.Delta == nil {
			data, err = cs.store.readBlob(s.id, s.c.SHA256, &cs.packs)
		} else {
			data, err = cs.rebuild(s, data)
		}
		if err != nil {
			return nil, s, err
		}
		cs.built[s.c.SHA256] = data
	}
	return data, savedContent{}, nil
}

// rebuild applies s's delta to base, the bytes of its base.
func (cs *Contents) rebuild(s savedContent, base []byte) ([]byte, error) {
	delta, err := cs.store.readBlob(s.id, s.c.Delta.SHA256, &cs.packs)
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
