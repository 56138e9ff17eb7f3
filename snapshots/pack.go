package snapshots

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"sort"

	"github.com/agentpack/agentpack/internal/fsys"
)

// packName is the file that holds many blobs of one snapshot in one write:
// saving 10,000 small files one by one costs seconds on a slow disk, one
// pack costs one write.
const packName = "blobs.pack"

// packIndex maps a sha256 to its [offset, length] inside the pack.
type packIndex map[string][2]int64

// SavePack stores every blob of datas in snapshots/<id>/blobs.pack with an
// index, deduplicated by hash. It returns the hex hashes in datas' order.
// ReadBlob finds blobs in the pack as well as in single files.
func (s *Store) SavePack(id string, datas [][]byte) ([]string, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	shas := make([]string, len(datas))
	idx := packIndex{}
	var pack []byte
	order := make([]int, 0, len(datas))
	for i, d := range datas {
		sum := sha256.Sum256(d)
		shas[i] = hex.EncodeToString(sum[:])
		if _, ok := idx[shas[i]]; ok {
			continue
		}
		idx[shas[i]] = [2]int64{int64(len(pack)), int64(len(d))}
		pack = append(pack, d...)
		order = append(order, i)
	}
	if len(order) == 0 {
		return shas, nil
	}
	if err := s.writeState(s.blobDir(id).JoinName(packName), pack); err != nil {
		return nil, err
	}
	data, err := json.Marshal(idx)
	if err != nil {
		return nil, ioError(err, "cannot encode the pack index of snapshot %s", id)
	}
	// The index is written last: a pack without an index is ignored.
	if err := s.writeState(s.blobDir(id).JoinName(packName+".idx"), data); err != nil {
		return nil, err
	}
	s.packs.Delete(id)
	return shas, nil
}

// readPacked returns the bytes of sha from id's pack, or fs.ErrNotExist.
func (s *Store) readPacked(id, sha string) ([]byte, error) {
	idx, err := s.packIndex(id)
	if err != nil {
		return nil, err
	}
	at, ok := idx[sha]
	if !ok {
		return nil, fs.ErrNotExist
	}
	// A positioned read: restoring n files from one pack must not read
	// the whole pack n times.
	return fsys.ReadRange(s.sys, s.blobDir(id).JoinName(packName), at[0], at[1])
}

func (s *Store) packIndex(id string) (packIndex, error) {
	if v, ok := s.packs.Load(id); ok {
		return v.(packIndex), nil
	}
	data, err := s.sys.ReadFile(s.blobDir(id).JoinName(packName + ".idx"))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return packIndex{}, nil
		}
		return nil, err
	}
	var idx packIndex
	if err := json.Unmarshal(data, &idx); err != nil {
		return nil, err
	}
	s.packs.Store(id, idx)
	return idx, nil
}

// packedHashes lists the hashes in id's pack, sorted (for tests and prune).
func (s *Store) packedHashes(id string) []string {
	idx, _ := s.packIndex(id)
	out := make([]string, 0, len(idx))
	for k := range idx {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
