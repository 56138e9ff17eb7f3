package bincodec

import (
	"bytes"
	"testing"
)

// TestStreamIsWriter: a file written through a Stream, flushed after every
// record across many chunks, is byte for byte the one a Writer builds, and
// opens.
func TestStreamIsWriter(t *testing.T) {
	const magic = "bincodec stream test\n"
	w := NewWriter(magic, 3, 0)
	var out bytes.Buffer
	s := NewStream(&out, magic, 3)
	for i := range 50_000 {
		for _, enc := range []*Writer{w, &s.Writer} {
			enc.Uint(uint64(i))
			enc.String("record")
			enc.Int(-int64(i))
		}
		s.Flush()
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	want := w.Finish()
	if out.Len() < 3*streamChunk || !bytes.Equal(out.Bytes(), want) {
		t.Fatalf("stream wrote %d bytes, the writer %d, or they differ", out.Len(), len(want))
	}
	r, err := Open(out.Bytes(), magic, 3)
	if err != nil || r.Uint() != 0 {
		t.Fatalf("the streamed file does not open: %v", err)
	}
}
