package snapshots

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/maphash"
	"math"
	"slices"
)

// deltaMagic starts every delta blob, so a delta is never mistaken for
// whole bytes and its format can change later.
const deltaMagic = "agentpack-delta-1\n"

// Delta operations: copy a range of the base, or insert literal bytes.
const (
	deltaCopy   = 'c'
	deltaInsert = 'i'
)

// errBadDelta is a delta blob that does not decode against its base.
var errBadDelta = errors.New("malformed delta")

// ComputeDelta returns a delta that [ApplyDelta] turns base into target
// with. It works on lines. Texts that differ a few lines at a time (a
// target manifest before and after a deploy: a hash changed here, an
// entry added there) are walked side by side ([deltaWriter.walk]), which
// holds nothing but the lines' bounds. Otherwise lines found exactly once
// in both texts anchor the alignment (the paths and hashes of a target
// manifest), and the lines between two anchors are matched by their common
// prefix and suffix. The delta is never wrong, only sometimes larger than
// it could be; its size grows with what changed, not with the size of the
// texts.
func ComputeDelta(base, target []byte) []byte {
	if len(base) > math.MaxInt32 || len(target) > math.MaxInt32 {
		// Past what a line's bounds hold: the whole target, inserted.
		d := deltaWriter{out: []byte(deltaMagic), insert: target}
		return d.finish()
	}
	a, b := splitLines(base), splitLines(target)
	d := deltaWriter{base: base, target: target, a: a, b: b, out: []byte(deltaMagic)}
	if d.walk() {
		return d.finish()
	}
	d = deltaWriter{base: base, target: target, a: a, b: b, out: d.out[:len(deltaMagic)]}
	ai, bi := 0, 0
	for _, m := range uniqueMatches(base, target, a, b) {
		d.region(ai, m[0], bi, m[1])
		d.copyLines(m[0], m[0]+1)
		ai, bi = m[0]+1, m[1]+1
	}
	d.region(ai, len(a)-1, bi, len(b)-1)
	return d.finish()
}

// ApplyDelta rebuilds the bytes delta was computed for from base.
func ApplyDelta(base, delta []byte) ([]byte, error) {
	if !bytes.HasPrefix(delta, []byte(deltaMagic)) {
		return nil, errBadDelta
	}
	delta = delta[len(deltaMagic):]
	var out []byte
	for len(delta) > 0 {
		op := delta[0]
		delta = delta[1:]
		switch op {
		case deltaCopy:
			off, n1 := binary.Uvarint(delta)
			if n1 <= 0 {
				return nil, errBadDelta
			}
			size, n2 := binary.Uvarint(delta[n1:])
			if n2 <= 0 || off > uint64(len(base)) || size > uint64(len(base))-off {
				return nil, errBadDelta
			}
			out = append(out, base[off:off+size]...)
			delta = delta[n1+n2:]
		case deltaInsert:
			size, n := binary.Uvarint(delta)
			if n <= 0 || size > uint64(len(delta)-n) {
				return nil, errBadDelta
			}
			out = append(out, delta[n:n+int(size)]...)
			delta = delta[n+int(size):]
		default:
			return nil, errBadDelta
		}
	}
	return out, nil
}

// line is one line of a text (with its newline) as a byte range: int32
// bounds, as a manifest of 100,000 files has 600,000 lines.
type line struct{ start, end int32 }

// splitLines cuts text into lines ending in '\n' (the last may not), plus a
// sentinel empty line at len(text) that keeps region bounds simple.
func splitLines(text []byte) []line {
	out := make([]line, 0, bytes.Count(text, []byte{'\n'})+2)
	start := 0
	for start < len(text) {
		i := bytes.IndexByte(text[start:], '\n')
		end := len(text)
		if i >= 0 {
			end = start + i + 1
		}
		out = append(out, line{int32(start), int32(end)})
		start = end
	}
	return append(out, line{int32(len(text)), int32(len(text))})
}

// uniqueMatches pairs the lines that occur once in a and once in b, keeping
// the longest run whose positions grow in both (so copies never cross).
func uniqueMatches(base, target []byte, a, b []line) [][2]int {
	// Lines are counted by a hash of their bytes, not by a copy of them
	// (600,000 lines of a large manifest made 60 MB of keys): lines
	// whose hashes collide count as one, so neither anchors, and a pair
	// is checked byte for byte before it anchors anything.
	type seen struct{ na, nb, ia, ib int32 }
	// A manifest's lines are a third distinct (each entry's path and
	// hash; its braces and module lines repeat): sized for that.
	count := make(map[uint64]seen, len(a)/3)
	for i, l := range a[:len(a)-1] {
		k := maphash.Bytes(lineSeed, base[l.start:l.end])
		s, ok := count[k]
		if ok {
			s.na++
		} else {
			s = seen{na: 1, ia: int32(i)}
		}
		count[k] = s
	}
	for i, l := range b[:len(b)-1] {
		k := maphash.Bytes(lineSeed, target[l.start:l.end])
		if s, ok := count[k]; ok {
			s.nb++
			s.ib = int32(i)
			count[k] = s
		}
	}
	var pairs [][2]int
	for _, s := range count {
		if s.na == 1 && s.nb == 1 {
			la, lb := a[s.ia], b[s.ib]
			if bytes.Equal(base[la.start:la.end], target[lb.start:lb.end]) {
				pairs = append(pairs, [2]int{int(s.ia), int(s.ib)})
			}
		}
	}
	slices.SortFunc(pairs, func(x, y [2]int) int { return x[1] - y[1] })
	return increasingRun(pairs)
}

// lineSeed is the seed of the line hashes of [uniqueMatches].
var lineSeed = maphash.MakeSeed()

// increasingRun returns the longest subsequence of pairs (sorted by their
// second element) whose first elements increase too (patience sorting).
func increasingRun(pairs [][2]int) [][2]int {
	tails := []int{} // index into pairs of the smallest tail of each length
	prev := make([]int, len(pairs))
	for i, p := range pairs {
		k, _ := slices.BinarySearchFunc(tails, p[0], func(t, v int) int { return pairs[t][0] - v })
		if k > 0 {
			prev[i] = tails[k-1]
		} else {
			prev[i] = -1
		}
		if k == len(tails) {
			tails = append(tails, i)
		} else {
			tails[k] = i
		}
	}
	out := make([][2]int, len(tails))
	if len(tails) == 0 {
		return out
	}
	for i, k := len(tails)-1, tails[len(tails)-1]; i >= 0; i, k = i-1, prev[k] {
		out[i] = pairs[k]
	}
	return out
}

// deltaWriter emits the operations of a delta, merging adjacent copies.
type deltaWriter struct {
	base     []byte
	target   []byte
	a, b     []line
	out      []byte
	copyFrom int // pending copy [copyFrom, copyTo) of base; empty when equal
	copyTo   int
	insert   []byte // pending literal bytes
	tries    int    // places the walk tried to align the texts at ([deltaWriter.spent])
}

// Where the walk looks for the texts to agree again after a difference:
// within resyncWindow lines of each, resyncRun lines in a row (or both
// ends). A run is longer than a manifest entry (7 lines), so it holds a
// path: a new entry's closing and opening lines, the same in every entry,
// do not pass for the texts agreeing again.
const (
	resyncWindow = 16
	resyncRun    = 8
)

// walk writes the delta by walking both texts from their start: equal
// lines are copied, and at a difference the nearest place where they agree
// again ([deltaWriter.resync]) is taken, what target has before it
// inserted and what base has skipped. It reports false, having written
// part of a delta, when no such place is found within the walk's budget
// ([deltaWriter.spent]): texts that are not one edited in places.
func (d *deltaWriter) walk() bool {
	na, nb := len(d.a)-1, len(d.b)-1 // without the sentinels
	i, j := 0, 0
	for i < na || j < nb {
		if i < na && j < nb && d.sameLine(i, j) {
			d.copyLines(i, i+1)
			i, j = i+1, j+1
			continue
		}
		x, y, ok := d.resync(i, j)
		if !ok {
			return false
		}
		for k := j; k < j+y; k++ {
			d.insert = append(d.insert, d.targetLine(k)...)
		}
		i, j = i+x, j+y
	}
	return true
}

// resync finds how many lines of base (x) and of target (y) to pass from
// a[i] and b[j], lines that differ, to where the texts agree again, from
// which resyncRun lines are equal or both texts end: first the pair with
// the smallest x+y within resyncWindow of each (a hash changed, an entry
// added), then any, found by the hashes of the lines passed (a block of
// entries). Once one text is used up, the rest of the other is what
// differs.
func (d *deltaWriter) resync(i, j int) (x, y int, ok bool) {
	na, nb := len(d.a)-1, len(d.b)-1
	switch {
	case i == na:
		return 0, nb - j, true
	case j == nb:
		return na - i, 0, true
	}
	for s := 1; s <= 2*resyncWindow; s++ {
		for x := max(0, s-resyncWindow); x <= min(s, resyncWindow); x++ {
			if y := s - x; i+x <= na && j+y <= nb && d.agree(i+x, j+y) {
				return x, y, true
			}
		}
		if d.spent() {
			return 0, 0, false
		}
	}
	// Blocks added, removed or changed whole (the entries of a new
	// skill, of one removed, or of one whose files all changed): the
	// nearest t such that the texts agree again t lines on in one and at
	// most t in the other, the lines passed found again by their hashes,
	// within a budget of lines for the whole walk.
	seenA, seenB := map[uint64]int{}, map[uint64]int{}
	// look notes that one text has line at t past its start (in seen)
	// and says where past its start the other text has it, if it does.
	look := func(seen, other map[uint64]int, line []byte, t int) (int, bool) {
		h := maphash.Bytes(lineSeed, line)
		if _, ok := seen[h]; !ok {
			seen[h] = t
		}
		o, ok := other[h]
		return o, ok
	}
	for t := 0; i+t < na || j+t < nb; t++ {
		if d.tries++; d.spent() {
			return 0, 0, false
		}
		if i+t < na {
			if o, ok := look(seenA, seenB, d.baseLine(i+t), t); ok && d.agree(i+t, j+o) {
				return t, o, true
			}
		}
		if j+t < nb {
			if o, ok := look(seenB, seenA, d.targetLine(j+t), t); ok && d.agree(i+o, j+t) {
				return o, t, true
			}
		}
	}
	// Nothing agrees again before the ends: unless what is left is a
	// few lines, the texts are not one edited in small places.
	return na - i, nb - j, na-i <= resyncWindow && nb-j <= resyncWindow
}

// spent reports whether the walk has tried more places than a few for
// each line of the texts: they are not one edited in small places (lines
// shuffled), and the anchors of unique lines align them at a bounded cost.
func (d *deltaWriter) spent() bool { return d.tries > 8*(len(d.a)+len(d.b))+4096 }

// agree reports whether the texts agree from a[i] and b[j] on: resyncRun
// equal lines, or fewer up to the end of both.
func (d *deltaWriter) agree(i, j int) bool {
	d.tries++
	na, nb := len(d.a)-1, len(d.b)-1
	for k := 0; k < resyncRun; k++ {
		switch {
		case i+k == na && j+k == nb:
			return true
		case i+k == na || j+k == nb || !d.sameLine(i+k, j+k):
			return false
		}
	}
	return true
}

func (d *deltaWriter) sameLine(i, j int) bool { return bytes.Equal(d.baseLine(i), d.targetLine(j)) }

func (d *deltaWriter) baseLine(i int) []byte { return d.base[d.a[i].start:d.a[i].end] }

// region aligns lines a[a0:a1] with b[b0:b1]: shared leading and trailing
// lines are copied, the rest of b is inserted.
func (d *deltaWriter) region(a0, a1, b0, b1 int) {
	same := d.sameLine
	for a0 < a1 && b0 < b1 && same(a0, b0) {
		d.copyLines(a0, a0+1)
		a0, b0 = a0+1, b0+1
	}
	tail := 0
	for a1-tail > a0 && b1-tail > b0 && same(a1-tail-1, b1-tail-1) {
		tail++
	}
	for j := b0; j < b1-tail; j++ {
		d.insert = append(d.insert, d.targetLine(j)...)
	}
	if tail > 0 {
		d.copyLines(a1-tail, a1)
	}
}

func (d *deltaWriter) targetLine(j int) []byte { return d.target[d.b[j].start:d.b[j].end] }

// copyLines queues a copy of lines a[i:j].
func (d *deltaWriter) copyLines(i, j int) {
	from, to := int(d.a[i].start), int(d.a[j-1].end)
	if len(d.insert) > 0 {
		d.flush()
	}
	if d.copyTo == from && d.copyTo > d.copyFrom {
		d.copyTo = to
		return
	}
	d.flushCopy()
	d.copyFrom, d.copyTo = from, to
}

func (d *deltaWriter) flushCopy() {
	if d.copyTo > d.copyFrom {
		d.out = append(d.out, deltaCopy)
		d.out = binary.AppendUvarint(d.out, uint64(d.copyFrom))
		d.out = binary.AppendUvarint(d.out, uint64(d.copyTo-d.copyFrom))
	}
	d.copyFrom, d.copyTo = 0, 0
}

func (d *deltaWriter) flush() {
	d.flushCopy()
	if len(d.insert) > 0 {
		d.out = append(d.out, deltaInsert)
		d.out = binary.AppendUvarint(d.out, uint64(len(d.insert)))
		d.out = append(d.out, d.insert...)
		d.insert = d.insert[:0]
	}
}

func (d *deltaWriter) finish() []byte {
	d.flush()
	return d.out
}
