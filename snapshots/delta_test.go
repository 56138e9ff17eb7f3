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
