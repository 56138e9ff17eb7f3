package merge3

import "testing"

func TestMerge(t *testing.T) {
	labels := Labels{Ours: "overlay", Theirs: "upstream"}
	for _, tc := range []struct {
		name, base, ours, theirs, want string
		conflicts                      int
	}{
		{"only ours", "a\nb\nc\n", "a\nB\nc\n", "a\nb\nc\n", "a\nB\nc\n", 0},
		{"only theirs", "a\nb\nc\n", "a\nb\nc\n", "a\nb\nC\n", "a\nb\nC\n", 0},
		{"both, apart", "a\nb\nc\nd\ne\n", "A\nb\nc\nd\ne\n", "a\nb\nc\nd\nE\n", "A\nb\nc\nd\nE\n", 0},
		{"same change", "a\nb\n", "a\nX\n", "a\nX\n", "a\nX\n", 0},
		{"insert both ends", "m\n", "top\nm\n", "m\nbottom\n", "top\nm\nbottom\n", 0},
		{"conflict", "line: BASE\n", "line: OURS\n", "line: THEIRS\n",
			"<<<<<<< overlay\nline: OURS\n=======\nline: THEIRS\n>>>>>>> upstream\n", 1},
		{"conflict without final newline", "x", "y", "z",
			"<<<<<<< overlay\ny\n=======\nz\n>>>>>>> upstream\n", 1},
		{"delete vs edit", "a\nb\nc\n", "a\nc\n", "a\nB\nc\n",
			"a\n<<<<<<< overlay\n=======\nB\n>>>>>>> upstream\nc\n", 1},
		{"empty base", "", "x\n", "x\n", "x\n", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Merge([]byte(tc.base), []byte(tc.ours), []byte(tc.theirs), labels)
			if string(r.Merged) != tc.want || r.Conflicts != tc.conflicts {
				t.Fatalf("got %q (%d conflicts), want %q (%d)", r.Merged, r.Conflicts, tc.want, tc.conflicts)
			}
			if HasMarkers(r.Merged) != (tc.conflicts > 0) {
				t.Fatalf("HasMarkers(%q) disagrees with %d conflicts", r.Merged, tc.conflicts)
			}
		})
	}
}
