package bincodec

import "testing"

// A shared Reader reads the same strings as a plain one, and fails the
// same way on a string longer than what is left.
func TestReaderShare(t *testing.T) {
	w := NewWriter("m\n", 1, 0)
	w.String("alpha")
	w.Bytes([]byte("raw"))
	w.String("")
	w.String("omega")
	data := w.Finish()
	for _, share := range []bool{false, true} {
		r, err := Open(data, "m\n", 1)
		if err != nil {
			t.Fatal(err)
		}
		if share {
			r.Share()
		}
		if a, b, c, d := r.String(), string(r.Bytes()), r.String(), r.String(); a != "alpha" || b != "raw" || c != "" || d != "omega" || r.Err != nil || len(r.B) != 0 {
			t.Errorf("share %v: %q %q %q %q %v", share, a, b, c, d, r.Err)
		}
		r = &Reader{B: []byte{10, 'x'}}
		if share {
			r.Share()
		}
		if s := r.String(); s != "" || r.Err == nil {
			t.Errorf("share %v: a string past the end read as %q, %v", share, s, r.Err)
		}
	}
}
