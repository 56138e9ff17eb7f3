package snapshots

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// manifestLike renders n entries the way a target manifest lists them.
func manifestLike(n int, sha func(i int) string) []byte {
	var b strings.Builder
	b.WriteString("{\n  \"schema_version\": 1,\n  \"managed_files\": [\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "    {\n      \"path\": \"skills/s%05d/SKILL.md\",\n      \"sha256\": %q,\n      \"module_ids\": [\n        \"skill:s%05d\"\n      ]\n    },\n", i, sha(i), i/10)
	}
	b.WriteString("  ]\n}\n")
	return []byte(b.String())
}

func TestDeltaRoundTrips(t *testing.T) {
	old := manifestLike(2000, func(i int) string { return fmt.Sprintf("%064x", i) })
	changed := manifestLike(2000, func(i int) string {
		if i%100 == 7 {
			return fmt.Sprintf("%064x", i+1_000_000)
		}
		return fmt.Sprintf("%064x", i)
	})
	cases := map[string][2][]byte{
		"one percent changed": {old, changed},
		"entries added":       {manifestLike(1000, func(i int) string { return fmt.Sprintf("%064x", i) }), old},
		"entries removed":     {old, manifestLike(10, func(i int) string { return fmt.Sprintf("%064x", i) })},
		"from nothing":        {nil, old},
		"to nothing":          {old, nil},
		"no final newline":    {[]byte("a\nb\nc"), []byte("a\nB\nc")},
		"repeated lines":      {[]byte("x\nx\nx\ny\n"), []byte("x\ny\nx\nx\n")},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			d := ComputeDelta(c[0], c[1])
			got, err := ApplyDelta(c[0], d)
			if err != nil || !bytes.Equal(got, c[1]) {
				t.Fatalf("ApplyDelta = %q, %v; want the target back", got, err)
			}
		})
	}
	if d := ComputeDelta(old, changed); len(d) > len(changed)/20 {
		t.Errorf("a delta of 20 changed entries in %d bytes is %d bytes; want it to grow with the change", len(changed), len(d))
	}
}

func TestApplyDeltaRefusesDamage(t *testing.T) {
	base := []byte("one\ntwo\n")
	d := ComputeDelta(base, []byte("one\nthree\n"))
	for name, bad := range map[string][]byte{
		"no magic":        []byte("c\x00\x03"),
		"copy past end":   append([]byte(deltaMagic), deltaCopy, 2, 100),
		"insert past end": append([]byte(deltaMagic), deltaInsert, 50, 'x'),
		"unknown op":      append([]byte(deltaMagic), 'z'),
		"truncated":       d[:len(d)-3],
	} {
		if got, err := ApplyDelta(base, bad); err == nil && name != "truncated" {
			t.Errorf("%s: ApplyDelta = %q, want an error", name, got)
		}
	}
}

func FuzzDelta(f *testing.F) {
	f.Add([]byte("a\nb\nc\n"), []byte("a\nc\nd\n"))
	f.Add([]byte(""), []byte("x"))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		got, err := ApplyDelta(a, ComputeDelta(a, b))
		if err != nil || !bytes.Equal(got, b) {
			t.Fatalf("round trip of %q → %q gave %q, %v", a, b, got, err)
		}
		_, _ = ApplyDelta(a, b) // never panics on arbitrary input
	})
}

func TestDeltaRandomEdits(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	words := []string{"a\n", "b\n", "{\n", "}\n", "x", "line\n"}
	for i := 0; i < 500; i++ {
		var a, b []byte
		for j := r.IntN(40); j > 0; j-- {
			a = append(a, words[r.IntN(len(words))]...)
		}
		b = bytes.Clone(a)
		for j := r.IntN(5); j > 0 && len(b) > 0; j-- {
			k := r.IntN(len(b))
			b = append(b[:k], append([]byte(words[r.IntN(len(words))]), b[k:]...)...)
		}
		got, err := ApplyDelta(a, ComputeDelta(a, b))
		if err != nil || !bytes.Equal(got, b) {
			t.Fatalf("round trip of %q → %q gave %q, %v", a, b, got, err)
		}
	}
}

// BenchmarkManifestDelta100k computes the two deltas a deploy of 1% saves
// for a target manifest of 100,000 files: 1,000 hashes changed, ten
// entries added and ten removed.
func BenchmarkManifestDelta100k(b *testing.B) {
	const n = 100_000
	old := manifestLike(n, func(i int) string { return fmt.Sprintf("%064x", i) })
	changed := manifestLike(n+10, func(i int) string {
		if i%100 == 7 {
			return fmt.Sprintf("%064x", i+1_000_000)
		}
		return fmt.Sprintf("%064x", i)
	})
	b.SetBytes(int64(len(old) + len(changed)))
	b.ReportAllocs()
	for b.Loop() {
		undo, redo := ComputeDelta(changed, old), ComputeDelta(old, changed)
		if len(undo)+len(redo) > len(old)/10 {
			b.Fatalf("deltas of %d and %d bytes", len(undo), len(redo))
		}
	}
}

// A manifest edited the way deploys edit it (hashes changed, whole blocks
// of entries added and removed, some wider than the walk's window) is
// walked, not indexed, and its delta grows with the edit; a text whose
// lines are shuffled is not walked, and still round-trips.
func TestDeltaWalksManifestEdits(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	sha := func(i int) string { return fmt.Sprintf("%064x", i) }
	entry := func(i int, sha string) string {
		return fmt.Sprintf("    {\n      \"path\": \"skills/s%05d/SKILL.md\",\n      \"sha256\": %q,\n      \"module_ids\": [\n        \"skill:s%05d\"\n      ]\n    },\n", i, sha, i/10)
	}
	walked := func(a, b []byte) bool {
		d := deltaWriter{base: a, target: b, a: splitLines(a), b: splitLines(b), out: []byte(deltaMagic)}
		return d.walk()
	}
	for round := 0; round < 20; round++ {
		ids := make([]int, 3000)
		for i := range ids {
			ids[i] = i
		}
		var a, b strings.Builder
		a.WriteString("{\n  \"managed_files\": [\n")
		b.WriteString("{\n  \"managed_files\": [\n")
		changed, next := 0, 100_000
		for i := 0; i < len(ids); i++ {
			switch op := r.IntN(200); {
			case op == 0: // a block of new entries, up to 40 (280 lines)
				for k := r.IntN(40) + 1; k > 0; k-- {
					b.WriteString(entry(next, sha(next)))
					next++
					changed++
				}
			case op == 1: // a block of entries removed
				k := min(r.IntN(40)+1, len(ids)-i)
				for ; k > 0; k-- {
					a.WriteString(entry(ids[i], sha(ids[i])))
					i++
					changed++
				}
				i--
				continue
			case op < 6: // a hash changed
				b.WriteString(entry(ids[i], sha(ids[i]+1_000_000)))
				a.WriteString(entry(ids[i], sha(ids[i])))
				changed++
				continue
			}
			a.WriteString(entry(ids[i], sha(ids[i])))
			b.WriteString(entry(ids[i], sha(ids[i])))
		}
		a.WriteString("  ]\n}\n")
		b.WriteString("  ]\n}\n")
		base, target := []byte(a.String()), []byte(b.String())
		for _, pair := range [][2][]byte{{base, target}, {target, base}} {
			if !walked(pair[0], pair[1]) {
				t.Fatalf("round %d: a manifest with %d entries changed was not walked", round, changed)
			}
			d := ComputeDelta(pair[0], pair[1])
			got, err := ApplyDelta(pair[0], d)
			if err != nil || !bytes.Equal(got, pair[1]) {
				t.Fatalf("round %d: the delta does not rebuild the target (%v)", round, err)
			}
			if limit := 300 * (changed + 1); len(d) > limit {
				t.Errorf("round %d: a delta of %d changed entries is %d bytes (more than %d)", round, changed, len(d), limit)
			}
		}
	}
	lines := strings.SplitAfter(string(manifestLike(500, sha)), "\n")
	r.Shuffle(len(lines), func(i, j int) { lines[i], lines[j] = lines[j], lines[i] })
	base, target := manifestLike(500, sha), []byte(strings.Join(lines, ""))
	if walked(base, target) {
		t.Error("a shuffled text was walked")
	}
	if got, err := ApplyDelta(base, ComputeDelta(base, target)); err != nil || !bytes.Equal(got, target) {
		t.Fatalf("the shuffled text does not round-trip (%v)", err)
	}
}
