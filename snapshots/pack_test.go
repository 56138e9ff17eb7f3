package snapshots

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentpack/agentpack/internal/apperr"
)

func TestSavePackRoundTrip(t *testing.T) {
	s := NewStore(t.TempDir())
	id := s.NewID(time.Now())
	datas := [][]byte{[]byte("one"), []byte("two"), []byte("one"), {}}
	shas, err := s.SavePack(id, datas)
	if err != nil {
		t.Fatal(err)
	}
	if shas[0] != shas[2] {
		t.Fatal("equal bytes must get equal hashes")
	}
	for i, d := range datas {
		got, err := s.ReadBlob(id, shas[i])
		if err != nil || string(got) != string(d) {
			t.Fatalf("ReadBlob(%d) = %q, %v", i, got, err)
		}
	}
	if n := len(s.packedHashes(id)); n != 3 {
		t.Fatalf("want 3 distinct blobs in the pack, got %d", n)
	}
	// Damage inside the pack is detected by the hash check.
	pack := s.blobDir(id).JoinName(packName).String()
	data, _ := os.ReadFile(pack)
	data[0] ^= 0xff
	if err := os.WriteFile(pack, data, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = NewStore(s.Dir()).ReadBlob(id, shas[0])
	wantCode(t, err, apperr.SnapshotCorrupted)
}

// TestPackGrowsBlobByBlob: a pack written blob by blob (in parallel, as a
// deploy adds each file it writes) serves what was added up to its last
// commit, deduplicated, and the rest once it is closed.
func TestPackGrowsBlobByBlob(t *testing.T) {
	s := NewStore(t.TempDir())
	id := s.NewID(time.Now())
	p, err := s.NewPack(id)
	if err != nil {
		t.Fatal(err)
	}
	early, err := p.Add([]byte("before bytes"))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Commit(); err != nil {
		t.Fatal(err)
	}
	if got, err := s.ReadBlob(id, early); err != nil || string(got) != "before bytes" {
		t.Fatalf("after Commit: %q, %v", got, err)
	}
	shas := make([]string, 64)
	var wg sync.WaitGroup
	for i := range shas {
		wg.Add(1)
		go func() {
			defer wg.Done()
			shas[i], _ = p.Add([]byte(fmt.Sprintf("file %d", i%32)))
		}()
	}
	wg.Wait()
	if _, err := s.ReadBlob(id, shas[0]); apperr.CodeOf(err) != apperr.SnapshotCorrupted {
		t.Fatalf("a blob added after the last commit was readable (%v)", err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	for i, sha := range shas {
		if got, err := s.ReadBlob(id, sha); err != nil || string(got) != fmt.Sprintf("file %d", i%32) {
			t.Fatalf("blob %d: %q, %v", i, got, err)
		}
	}
	if n := len(s.packedHashes(id)); n != 33 {
		t.Errorf("%d distinct blobs in the pack, want 33", n)
	}
	if fi, err := os.Stat(s.blobDir(id).JoinName(packName).String()); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("pack mode %v, %v; want 0600", fi.Mode(), err)
	}
}

// TestPackIndexReadsAnyJSON: an index as Pack writes it and the same index
// in any other JSON form (indented, unordered, with a key that is no hash)
// find the same blobs.
func TestPackIndexReadsAnyJSON(t *testing.T) {
	a, b := strings.Repeat("0a", 32), strings.Repeat("f1", 32)
	written := `{"` + a + `":[0,12],"` + b + `":[12,3456789012]}`
	other := "{\n  \"" + b + "\": [12, 3456789012],\n  \"x\": [1, 1],\n  \"" + a + "\": [0, 12]\n}"
	for _, data := range []string{written, other} {
		idx, err := parsePackIndex([]byte(data))
		if err != nil || len(idx) != 2 {
			t.Fatalf("parsePackIndex(%q) = %v, %v", data, idx, err)
		}
		if at, ok := idx.find(a); !ok || at != [2]int64{0, 12} {
			t.Errorf("find(a) in %q = %v, %v", data, at, ok)
		}
		if at, ok := idx.find(b); !ok || at != [2]int64{12, 3456789012} {
			t.Errorf("find(b) in %q = %v, %v", data, at, ok)
		}
		if _, ok := idx.find(strings.Repeat("0b", 32)); ok {
			t.Errorf("find of an absent hash succeeded in %q", data)
		}
	}
	if _, ok := parseWrittenIndex([]byte(written)); !ok {
		t.Error("the written form was not read without encoding/json")
	}
	for _, bad := range []string{"", "{", `{"` + a + `":[0,12]`} {
		if _, err := parsePackIndex([]byte(bad)); err == nil {
			t.Errorf("parsePackIndex(%q) accepted a damaged index", bad)
		}
	}
	if idx, err := parsePackIndex([]byte("{}")); err != nil || len(idx) != 0 {
		t.Errorf("empty index = %v, %v", idx, err)
	}
}

// TestBlobSetFindsEveryBlob: the set of a pack being written finds each
// blob added, once, at the span it was added with, through growth.
func TestBlobSetFindsEveryBlob(t *testing.T) {
	var b blobSet
	var want [][2]int64
	for i := range 5000 {
		sum := sha256.Sum256([]byte(fmt.Sprint(i)))
		span := [2]int64{int64(3 * i), int64(i % 7)}
		if !b.add(sum, span) || b.add(sum, [2]int64{1, 99}) {
			t.Fatalf("blob %d: added twice or not at all", i)
		}
		want = append(want, span)
	}
	for i := range 5000 {
		if at, ok := b.lookup(sha256.Sum256([]byte(fmt.Sprint(i)))); !ok || at != want[i] {
			t.Fatalf("blob %d at %v, %v; want %v", i, at, ok, want[i])
		}
	}
	if _, ok := b.lookup(sha256.Sum256([]byte("absent"))); ok {
		t.Error("found a blob never added")
	}
	order := b.sorted()
	for i := 1; i < len(order); i++ {
		if bytes.Compare(b.sums[order[i-1]][:], b.sums[order[i]][:]) >= 0 {
			t.Fatal("sorted is not ordered by hash")
		}
	}
}

// A blob set told how many blobs are coming makes its lists and slots
// once: adding them grows nothing, and blobs added before it, and after,
// are all found.
func TestBlobSetExpect(t *testing.T) {
	var b blobSet
	sum := func(i int) [32]byte { return sha256.Sum256([]byte{byte(i), byte(i >> 8)}) }
	b.add(sum(0), [2]int64{0, 1})
	b.expect(1000)
	sums, slots := cap(b.sums), len(b.slots)
	for i := 1; i < 1000; i++ {
		if !b.add(sum(i), [2]int64{int64(i), 1}) {
			t.Fatalf("blob %d not added", i)
		}
	}
	if cap(b.sums) != sums || len(b.slots) != slots || slots < 2000 {
		t.Errorf("adding the blobs expected grew the set: %d -> %d sums, %d -> %d slots", sums, cap(b.sums), slots, len(b.slots))
	}
	for i := range 1000 {
		if at, ok := b.lookup(sum(i)); !ok || at[0] != int64(i) {
			t.Fatalf("blob %d: %v, %v", i, at, ok)
		}
	}
	if b.add(sum(7), [2]int64{9, 9}) {
		t.Error("a blob held already was added again")
	}
}
