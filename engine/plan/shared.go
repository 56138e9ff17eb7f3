package plan

import (
	"encoding/hex"
	"path/filepath"

	"github.com/agentpack/agentpack/engine/desired"
	"github.com/agentpack/agentpack/internal/arena"
	"github.com/agentpack/agentpack/internal/fsys"
)

// sharer finds the entries of a root's manifest among the desired state's
// files, so an entry the desired state also has shares its path and hash
// strings instead of holding copies: at 10,000 deployed files that is
// 10,000 paths held once instead of three times (the desired file's, the
// manifest entry's, the entry's absolute path) and 10,000 hashes once
// instead of twice. Only memory is shared: every string is the one it
// replaces, byte for byte.
type sharer struct {
	files *desired.Cursor
	root  fsys.AbsPath
	buf   []byte
}

// newSharer returns a sharer for root's manifest, nil (sharing nothing)
// when d is nil or root's entries do not lie at root + "/" + their path.
func newSharer(d *desired.State, root fsys.AbsPath) *sharer {
	if d == nil || filepath.Separator != '/' || root == "/" || !fsys.CleanAbs(root.String()) {
		return nil
	}
	return &sharer{files: d.Cursor(), root: root}
}

// sharedFile is the desired file at s's root/rel, or nil.
func sharedFile[T ~string | ~[]byte](s *sharer, rel T) *desired.File {
	if s == nil {
		return nil
	}
	s.buf = append(append(append(s.buf[:0], s.root...), '/'), rel...)
	return s.files.FileAt(s.buf)
}

// abs is the path of the manifest entry at rel below the root, the desired
// file's when it has one there.
func (s *sharer) abs(rel string) (fsys.AbsPath, bool) {
	if s == nil || !fsys.CleanElems(rel) {
		return "", false
	}
	if f := sharedFile(s, rel); f != nil {
		return f.Path, true
	}
	return "", false
}

// hash is raw, a sha256, in lowercase hex: f's hash when it is the same,
// else a new string made in strs.
func sharedHash(f *desired.File, raw []byte, strs *arena.Arena) string {
	if f != nil && len(raw) == 32 && len(f.SHA256) == 64 {
		var buf [64]byte
		hex.Encode(buf[:], raw)
		if string(buf[:]) == f.SHA256 {
			return f.SHA256
		}
	}
	return strs.Hex(raw)
}
