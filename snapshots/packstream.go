package snapshots

import (
	"crypto/sha256"
	"encoding/hex"
	"io"

	"github.com/agentpack/agentpack/internal/fsys"
)

// AddFunc appends to the pack what write writes, hashing it as it goes,
// and returns its hash in hex and its length: bytes too many to hold (the
// target manifest of 100,000 files is 18 MB) are saved as they are made.
// When the pack holds those bytes already, the new copy stays in the file
// unindexed. A failure ends the pack: every later call returns it.
func (p *Pack) AddFunc(write func(io.Writer) error) (string, int64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return "", 0, p.err
	}
	h := sha256.New()
	out := &hashingWriter{w: p.buf, h: h}
	err := write(out)
	p.size += out.n
	if err != nil {
		p.err = err
		return "", 0, err
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	p.idx.add(sum, [2]int64{p.size - out.n, out.n})
	return hex.EncodeToString(sum[:]), out.n, nil
}

// hashingWriter writes to w and h and counts what it wrote.
type hashingWriter struct {
	w io.Writer
	h io.Writer
	n int64
}

func (hw *hashingWriter) Write(b []byte) (int, error) {
	n, err := hw.w.Write(b)
	hw.h.Write(b[:n])
	hw.n += int64(n)
	return n, err
}

// copyChunk is how much of a blob [Pack.CopyTo] reads at a time, into one
// buffer: a 2 MB manifest copied in fresh 1 MB chunks took 450 page
// faults.
const copyChunk = 256 << 10

// CopyTo writes to w the blob with hash sha added to the pack before its
// last [Pack.Commit], a chunk at a time. Bytes that do not match the hash
// fail it, after they were written: a caller writing a file through
// [fsys.WriteStream] then leaves the file as it was. A blob the pack does
// not hold, or damaged bytes, are E_SNAPSHOT_CORRUPTED, as for [Store.ReadBlob].
func (p *Pack) CopyTo(sha string, w io.Writer) error {
	path := p.s.blobDir(p.id).JoinName(packName)
	sum, ok := decodeSum(sha)
	p.mu.Lock()
	at := [2]int64{}
	if ok {
		at, ok = p.idx.lookup(sum)
	}
	p.mu.Unlock()
	if !ok {
		return blobCorrupted(p.id, sha, path, "snapshot %s is missing its saved bytes %s", p.id, sha)
	}
	h := sha256.New()
	buf := make([]byte, min(int64(copyChunk), at[1]))
	for off, end := at[0], at[0]+at[1]; off < end; {
		n := min(int64(copyChunk), end-off)
		data := buf[:n]
		if err := fsys.ReadRangeInto(p.s.sys, path, off, data); err != nil {
			return ioError(err, "cannot read saved bytes %s of snapshot %s", sha, p.id)
		}
		h.Write(data)
		if _, err := w.Write(data); err != nil {
			return err
		}
		off += n
	}
	if [sha256.Size]byte(h.Sum(nil)) != sum {
		return blobCorrupted(p.id, sha, path, "saved bytes %s of snapshot %s are damaged", sha, p.id)
	}
	return nil
}
