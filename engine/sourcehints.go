package engine

import (
	"cmp"
	"encoding/hex"
	"hash/maphash"
	"io/fs"
	"slices"

	"github.com/agentpack/agentpack/engine/desired"
	"github.com/agentpack/agentpack/engine/module"
	"github.com/agentpack/agentpack/internal/checksum"
	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/agentpack/agentpack/internal/gcpace"
	"github.com/agentpack/agentpack/internal/keyset"
)

// knownSource is a source file as the last load read it: the key of its
// path, its stat data and its hash, 80 bytes (no path, no hex).
type knownSource struct {
	key     uint64
	size    int64
	mtimeNS int64
	ctimeNS int64
	ino     uint64
	mode    fs.FileMode
	sum     [32]byte
}

// maxKnownSources is the largest load whose entry is decoded for its known
// sources. Past it, decoding the entry and holding what it knows cost what
// they save: at 100,000 files a plan after an edit took as long with them
// and 11 MiB more.
const maxKnownSources = gcpace.LargeFiles

// knownSeed keys paths among known sources (in this process only).
var knownSeed = maphash.MakeSeed()

// knownSourceHashes is what key's source cache entry at path, out of date,
// knows of the source files its load read ([knownSourcesOf]); nil when
// there is no entry of key. It is read through sys, not the load's
// tracker: the entry is agentpack's own cache, not an input of the load.
func knownSourceHashes(sys fsys.System, key string, path fsys.AbsPath) module.KnownHash {
	ent := readEntry(sys, key, path)
	if ent == nil || ent.Stamp.Len() > maxKnownSources {
		return nil
	}
	d, err := ent.DecodeDesired()
	if err != nil {
		return nil
	}
	known := knownSourcesOf(d, ent.Stamp.Entries())
	// The entry decoded to find them is garbage now: collected before the
	// load allocates, it does not add to the load's peak.
	gcpace.Between(ent.Stamp.Len())
	return known
}

// relocatedKnownSources is [knownSourceHashes] of the entry a project with
// none of its own would have taken its state from ([Engine.relocatedHit]):
// the sources are the same repo's files.
func (e *Engine) relocatedKnownSources(req Request) module.KnownHash {
	from, ok := e.relocatedFrom(req)
	if !ok {
		return nil
	}
	key := e.sourceCacheKey(req, from.String())
	return knownSourceHashes(e.Sys, key, e.sourceCachePath(key))
}

// knownSourcesOf is what a load that compiled d, reading what entries
// describe, knows of the source files it read: the stat data and hash of
// each file d copies verbatim (stat data a fingerprint keeps only when not
// too recent to trust). The load after an edit reads and hashes only the
// files whose stat data moved (a plan after an edit of one file of 10,000:
// one file read, not 10,000). nil when it knows none.
func knownSourcesOf(d *desired.State, entries []fsys.FingerprintEntry) module.KnownHash {
	sums := make(map[fsys.AbsPath][32]byte, len(d.Files))
	for _, f := range d.Files {
		if sum, ok := checksum.ParseSHA256Hex(f.SHA256); ok && f.HasSrc() && f.Keyed == nil {
			sums[f.Src()] = sum
		}
	}
	known := make([]knownSource, 0, len(sums))
	for _, e := range entries {
		if sum, ok := sums[e.Path]; ok && !e.Missing && !e.Listed && e.Mode.IsRegular() {
			known = append(known, knownSource{key: maphash.String(knownSeed, string(e.Path)), size: e.Size,
				mtimeNS: e.MtimeNS, ctimeNS: e.CtimeNS, ino: e.Ino, mode: e.Mode, sum: sum})
		}
	}
	known = slices.Clip(keyset.SortUnique(known, func(e *knownSource) uint64 { return e.key }))
	if len(known) == 0 {
		return nil
	}
	return func(path fsys.AbsPath, st fsys.StatData) (string, bool) {
		k := maphash.String(knownSeed, string(path))
		i, ok := slices.BinarySearchFunc(known, k, func(e knownSource, k uint64) int { return cmp.Compare(e.key, k) })
		if !ok {
			return "", false
		}
		e := &known[i]
		if e.size != st.Size || e.mtimeNS != st.MtimeNS || e.ctimeNS != st.CtimeNS || e.ino != st.Ino || e.mode != st.Mode {
			return "", false
		}
		return hex.EncodeToString(e.sum[:]), true
	}
}
