package snapshots

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"slices"
)

// blobSet is the index of a pack being written: the hash of each blob in
// the order they were added, its offset and length, and an open-addressing
// table of their positions by hash. About 60 bytes a blob, where a map
// from hash to [offset, length] costs 85: a rollback of 100,000 files
// adds each file's bytes.
type blobSet struct {
	sums  [][sha256.Size]byte
	spans [][2]int64 // offset and length of each blob in the pack
	// slots holds 1 + the position of a blob, or 0 (free); its size is a
	// power of two at least twice the number of blobs.
	slots []uint32
}

// lookup returns where the blob with hash sum is in the pack.
func (b *blobSet) lookup(sum [sha256.Size]byte) ([2]int64, bool) {
	_, i := b.find(sum)
	if i < 0 {
		return [2]int64{}, false
	}
	return b.spans[i], true
}

// add records the blob with hash sum at [offset, length] span of the
// pack, unless the set has it; it reports whether it was added.
func (b *blobSet) add(sum [sha256.Size]byte, span [2]int64) bool {
	if 2*(len(b.sums)+1) > len(b.slots) {
		b.grow()
	}
	slot, i := b.find(sum)
	if i >= 0 {
		return false
	}
	b.sums = append(b.sums, sum)
	b.spans = append(b.spans, span)
	b.slots[slot] = uint32(len(b.sums))
	return true
}

// find returns the slot of sum and its position, or the free slot where it
// goes and -1.
func (b *blobSet) find(sum [sha256.Size]byte) (slot, i int) {
	if len(b.slots) == 0 {
		return 0, -1
	}
	mask := len(b.slots) - 1
	// The bytes of a SHA-256 are spread evenly: the first eight hash it.
	for slot = int(binary.LittleEndian.Uint64(sum[:8])) & mask; ; slot = (slot + 1) & mask {
		at := b.slots[slot]
		if at == 0 {
			return slot, -1
		}
		if b.sums[at-1] == sum {
			return slot, int(at - 1)
		}
	}
}

// grow doubles the table and puts every blob back in it.
// expect makes room for n blobs in all, so that adding them neither
// grows the lists by doubling nor places every blob again.
func (b *blobSet) expect(n int) {
	if n <= len(b.sums) {
		return
	}
	b.sums = slices.Grow(b.sums, n-len(b.sums))
	b.spans = slices.Grow(b.spans, n-len(b.spans))
	if 2*n > len(b.slots) {
		size := 64
		for size < 2*n {
			size *= 2
		}
		b.slots = make([]uint32, size/2) // grow doubles it and places the blobs there
		b.grow()
	}
}

func (b *blobSet) grow() {
	b.slots = make([]uint32, max(64, 2*len(b.slots)))
	mask := len(b.slots) - 1
	for i, sum := range b.sums {
		slot := int(binary.LittleEndian.Uint64(sum[:8])) & mask
		for b.slots[slot] != 0 {
			slot = (slot + 1) & mask
		}
		b.slots[slot] = uint32(i + 1)
	}
}

// sorted returns the positions of the blobs, ordered by hash.
func (b *blobSet) sorted() []uint32 {
	order := make([]uint32, len(b.sums))
	for i := range order {
		order[i] = uint32(i)
	}
	slices.SortFunc(order, func(x, y uint32) int { return bytes.Compare(b.sums[x][:], b.sums[y][:]) })
	return order
}
