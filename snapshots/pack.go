package snapshots

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"slices"
	"strconv"
	"sync"

	"github.com/agentpack/agentpack/internal/fsys"
)

// packName is the file that holds many blobs of one snapshot in one write:
// saving 10,000 small files one by one costs seconds on a slow disk, one
// pack costs one write.
const packName = "blobs.pack"

// packIndex is a pack's index as read back: each blob's hash with the
// offset and length of its bytes in the pack, sorted by hash. At 48 bytes
// a blob it is a third of a map of hex strings: a rollback of a deploy of
// 100,000 files reads the index of that deploy's pack.
type packIndex []packEntry

type packEntry struct {
	sum    [sha256.Size]byte
	off, n int64
}

// find returns the offset and length of the blob with hash sha (hex).
func (idx packIndex) find(sha string) ([2]int64, bool) {
	sum, ok := decodeSum(sha)
	if !ok {
		return [2]int64{}, false
	}
	i, ok := slices.BinarySearchFunc(idx, sum, func(e packEntry, s [sha256.Size]byte) int { return bytes.Compare(e.sum[:], s[:]) })
	if !ok {
		return [2]int64{}, false
	}
	return [2]int64{idx[i].off, idx[i].n}, true
}

// decodeSum decodes a hash written as 64 lowercase hex digits.
func decodeSum(sha string) (sum [sha256.Size]byte, ok bool) {
	if !isSHA256(sha) {
		return sum, false
	}
	for i := range sum {
		sum[i] = unhex(sha[2*i])<<4 | unhex(sha[2*i+1])
	}
	return sum, true
}

func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c - 'a' + 10
}

// parsePackIndex decodes an index file: as [Pack.writeIndex] writes it,
// without a map or a string per blob; anything else through encoding/json.
// Keys that are not hashes are left out, since no blob is looked up by them.
func parsePackIndex(data []byte) (packIndex, error) {
	if idx, ok := parseWrittenIndex(data); ok {
		return idx, nil
	}
	var m map[string][2]int64
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	idx := make(packIndex, 0, len(m))
	for k, at := range m {
		if sum, ok := decodeSum(k); ok {
			idx = append(idx, packEntry{sum, at[0], at[1]})
		}
	}
	slices.SortFunc(idx, func(a, b packEntry) int { return bytes.Compare(a.sum[:], b.sum[:]) })
	return idx, nil
}

// parseWrittenIndex decodes `{"<hash>":[off,len],...}` with the hashes
// strictly increasing, or reports false.
func parseWrittenIndex(data []byte) (packIndex, bool) {
	if string(data) == "{}" {
		return packIndex{}, true
	}
	idx := make(packIndex, 0, bytes.Count(data, []byte(`":[`)))
	rest, sep := data, byte('{')
	for {
		const keyLen = 1 + 2*sha256.Size + 3 // "<hash>":[
		if len(rest) < 1+keyLen || rest[0] != sep || rest[1] != '"' || string(rest[keyLen-2:keyLen+1]) != `":[` {
			return nil, false
		}
		sum, ok := decodeSum(string(rest[2 : keyLen-2]))
		if !ok || len(idx) > 0 && bytes.Compare(idx[len(idx)-1].sum[:], sum[:]) >= 0 {
			return nil, false
		}
		rest = rest[keyLen+1:]
		off, rest1, ok1 := parseUint(rest, ',')
		n, rest2, ok2 := parseUint(rest1, ']')
		if !ok1 || !ok2 {
			return nil, false
		}
		idx = append(idx, packEntry{sum, off, n})
		rest, sep = rest2, ','
		if string(rest) == "}" {
			return idx, true
		}
	}
}

// parseUint decodes the decimal digits before end, and what follows end.
func parseUint(b []byte, end byte) (int64, []byte, bool) {
	i := bytes.IndexByte(b, end)
	if i <= 0 || i > 18 {
		return 0, nil, false
	}
	v, err := strconv.ParseInt(string(b[:i]), 10, 64)
	if err != nil || v < 0 || b[0] == '+' || b[0] == '-' {
		return 0, nil, false
	}
	return v, b[i+1:], true
}

// SavePack stores every blob of datas in snapshots/<id>/blobs.pack with an
// index, deduplicated by hash. It returns the hex hashes in datas' order.
// ReadBlob finds blobs in the pack as well as in single files.
func (s *Store) SavePack(id string, datas [][]byte) ([]string, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	if len(datas) == 0 {
		return []string{}, nil
	}
	p, err := s.NewPack(id)
	if err != nil {
		return nil, err
	}
	shas := make([]string, len(datas))
	for i, d := range datas {
		if shas[i], err = p.Add(d); err != nil {
			_ = p.Close()
			return nil, err
		}
	}
	return shas, p.Close()
}

// Pack writes the pack of one snapshot blob by blob, so a deploy of ten
// thousand files never holds their bytes at once: each is added as it is
// written. Blobs added are readable ([Store.ReadBlob]) once [Pack.Commit]
// returns. It is safe for concurrent use by goroutines.
type Pack struct {
	s   *Store
	id  string
	out fsys.Stream
	buf *bufio.Writer

	mu   sync.Mutex
	idx  blobSet
	size int64
	err  error // the first write error; every later call returns it
}

// NewPack starts snapshot id's pack, empty.
func (s *Store) NewPack(id string) (*Pack, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	dir := s.blobDir(id)
	if err := ensureDir(s.sys, dir); err != nil {
		return nil, err
	}
	out, err := fsys.CreateStream(s.sys, dir.JoinName(packName), filePerm)
	if err != nil {
		return nil, err
	}
	s.packs.Delete(id)
	return &Pack{s: s, id: id, out: out, buf: bufio.NewWriterSize(out, 64<<10)}, nil
}

// Expect makes room in the pack's index for n blobs in all: a
// transaction that knows how many files it saves has the index made once
// (10,000 files: 0.6 MB once, not 1.2 MB grown by doubling).
func (p *Pack) Expect(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.idx.expect(n)
}

// Add appends data to the pack, unless bytes with its hash are there
// already, and returns that hash in hex.
func (p *Pack) Add(data []byte) (string, error) {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), p.AddSum(data, sum)
}

// AddSum is [Pack.Add] of bytes whose SHA-256 the caller knows to be sum,
// having just checked it (a source file read again to be written): 10,000
// new files are not hashed a third time.
func (p *Pack) AddSum(data []byte, sum [sha256.Size]byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return p.err
	}
	if _, ok := p.idx.lookup(sum); !ok {
		if _, err := p.buf.Write(data); err != nil {
			p.err = err
			return err
		}
		p.idx.add(sum, [2]int64{p.size, int64(len(data))})
		p.size += int64(len(data))
	}
	return nil
}

// Commit makes every blob added so far readable: it flushes and syncs the
// pack, then replaces its index. A pack is only read through its index,
// so a crash at any point leaves it readable up to the last commit.
func (p *Pack) Commit() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return p.err
	}
	if p.err = p.buf.Flush(); p.err == nil {
		p.err = p.out.Sync()
	}
	if p.err == nil {
		p.err = fsys.WriteStream(p.s.sys, p.s.blobDir(p.id).JoinName(packName+".idx"), filePerm, p.writeIndex)
	}
	p.s.packs.Delete(p.id)
	return p.err
}

// writeIndex writes the index as JSON: each hash, sorted, with the offset
// and length of its bytes.
func (p *Pack) writeIndex(w io.Writer) error {
	line := make([]byte, 0, 128)
	for i, k := range p.idx.sorted() {
		at := p.idx.spans[k]
		line = append(line[:0], ',')
		if i == 0 {
			line[0] = '{'
		}
		line = append(line, '"')
		line = hex.AppendEncode(line, p.idx.sums[k][:])
		line = append(line, '"', ':', '[')
		line = strconv.AppendInt(line, at[0], 10)
		line = append(line, ',')
		line = strconv.AppendInt(line, at[1], 10)
		line = append(line, ']')
		if _, err := w.Write(line); err != nil {
			return err
		}
	}
	if len(p.idx.sums) == 0 {
		_, err := io.WriteString(w, "{}")
		return err
	}
	_, err := io.WriteString(w, "}")
	return err
}

// Close commits the pack and ends it.
func (p *Pack) Close() error {
	err := p.Commit()
	if cerr := p.out.Close(); err == nil {
		err = cerr
	}
	return err
}

// keptPackIndex is id's pack index when [Store.packIndex] kept it.
func (s *Store) keptPackIndex(id string) (packIndex, bool) {
	if v, ok := s.packs.Load(id); ok {
		idx, ok := v.(packIndex)
		return idx, ok
	}
	return nil, false
}

// readPacked returns the bytes of sha from id's pack, or fs.ErrNotExist;
// the pack is read through packs when set.
func (s *Store) readPacked(id, sha string, packs *openPacks) ([]byte, error) {
	idx, err := s.packIndex(id)
	if err != nil {
		return nil, err
	}
	at, ok := idx.find(sha)
	if !ok {
		return nil, fs.ErrNotExist
	}
	// A positioned read: restoring n files from one pack must not read
	// the whole pack n times.
	path := s.blobDir(id).JoinName(packName)
	if packs != nil {
		return packs.read(s.sys, path, at[0], at[1])
	}
	return fsys.ReadRange(s.sys, path, at[0], at[1])
}

// openPacks holds packs open for the many reads of one rollback: 9,000
// saved files read from one pack cost one open, not one each.
type openPacks struct {
	mu    sync.Mutex
	files map[fsys.AbsPath]fsys.RangeFile
}

// read reads n bytes at off of the pack at path, opening it on first use.
func (o *openPacks) read(sys fsys.System, path fsys.AbsPath, off, n int64) ([]byte, error) {
	o.mu.Lock()
	f, ok := o.files[path]
	if !ok {
		var err error
		if f, err = fsys.OpenRange(sys, path); err != nil {
			o.mu.Unlock()
			return nil, err
		}
		if o.files == nil {
			o.files = map[fsys.AbsPath]fsys.RangeFile{}
		}
		o.files[path] = f
	}
	o.mu.Unlock()
	return f.ReadRange(off, n)
}

// close closes every pack held open.
func (o *openPacks) close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	for path, f := range o.files {
		_ = f.Close()
		delete(o.files, path)
	}
}

// packIndex returns id's pack index. It is kept for the next read from
// the second read on: a rollback of a deploy of 100,000 files reads one
// blob of that deploy's pack (the roots registry), and need not hold its
// index while it writes.
func (s *Store) packIndex(id string) (packIndex, error) {
	if idx, ok := s.keptPackIndex(id); ok {
		return idx, nil
	}
	// One reader at a time past this point: the reads of a rollback run
	// in parallel, and each would otherwise parse the index on its own.
	s.packMu.Lock()
	defer s.packMu.Unlock()
	if idx, ok := s.keptPackIndex(id); ok {
		return idx, nil
	}
	data, err := s.sys.ReadFile(s.blobDir(id).JoinName(packName + ".idx"))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return packIndex{}, nil
		}
		return nil, err
	}
	idx, err := parsePackIndex(data)
	if err != nil {
		return nil, err
	}
	if _, readBefore := s.packs.LoadOrStore(id, readOnce{}); readBefore {
		s.packs.Store(id, idx)
	}
	return idx, nil
}

// readOnce marks a pack whose index was read once, and not kept.
type readOnce struct{}

// packedHashes lists the hashes in id's pack, sorted (for tests and prune).
func (s *Store) packedHashes(id string) []string {
	idx, _ := s.packIndex(id)
	out := make([]string, len(idx))
	for i, e := range idx {
		out[i] = hex.EncodeToString(e.sum[:])
	}
	return out
}
