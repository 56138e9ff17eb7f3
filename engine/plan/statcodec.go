package plan

import (
	"slices"

	"github.com/agentpack/agentpack/internal/bincodec"
)

// The stat cache's files (statcache.go) are bincodec files: magic, version,
// the base's generation (a base's own, a delta's the one it amends), the
// number of entries, then each
// entry sorted by path: the length of the path it shares with the previous
// one, the rest of the path, and either 0 (a delta's "forgotten") or 1,
// size, mtime, ctime, inode and the 32 bytes of the sha256.
const (
	statBaseMagic  = "agentpack stat cache\n"
	statDeltaMagic = "agentpack stat cache delta\n"
	statVersion    = 1
)

// encodeStatFile renders the entries named by keys; a key with no entry is
// written as forgotten. gen is the base's generation.
func encodeStatFile(magic string, gen uint64, entries map[string]statEntry, keys []string) []byte {
	slices.Sort(keys)
	w := bincodec.NewWriter(magic, statVersion, 64+len(keys)*64)
	w.Uint(gen)
	w.Len(len(keys), false)
	prev := ""
	for _, k := range keys {
		shared := commonPrefix(prev, k)
		w.Uint(uint64(shared))
		w.String(k[shared:])
		prev = k
		e, ok := entries[k]
		if !ok || !e.Hashed {
			w.Bool(false)
			continue
		}
		w.Bool(true)
		w.Int(e.Size)
		w.Int(e.MtimeNS)
		w.Int(e.CtimeNS)
		w.Uint(e.Ino)
		w.B = append(w.B, e.Sum[:]...)
	}
	return w.Finish()
}

// decodeStatFile adds a file's entries to out, a forgotten one with no
// hash, and returns the file's generation. The paths are decoded into one
// string, not one allocation each.
func decodeStatFile(data []byte, magic string, out map[string]statEntry) (uint64, error) {
	r, err := bincodec.Open(data, magic, statVersion)
	if err != nil {
		return 0, err
	}
	gen := r.Uint()
	n, _ := r.Len(2)
	keys := newArena(len(data))
	prev := ""
	for range n {
		shared := r.Uint()
		suffix := r.Bytes()
		if r.Err != nil || shared > uint64(len(prev)) {
			return 0, bincodec.ErrDamaged
		}
		key := keys.join(prev[:shared], suffix)
		prev = key
		var e statEntry
		if r.Bool() {
			e = statEntry{Size: r.Int(), MtimeNS: r.Int(), CtimeNS: r.Int(), Ino: r.Uint(), Hashed: true}
			copy(e.Sum[:], r.Raw(32))
		}
		if r.Err != nil {
			return 0, r.Err
		}
		out[key] = e
	}
	if r.Err != nil || len(r.B) != 0 || gen == 0 {
		return 0, bincodec.ErrDamaged
	}
	return gen, nil
}

func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}
