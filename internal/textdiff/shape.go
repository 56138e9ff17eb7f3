package textdiff

import "bytes"

// Shape is what the diff of a created file needs to know of its bytes to
// be sized without them: their length, whether they are text, how many
// lines they have and whether the last ends without a newline. A loader
// that reads a file anyway (to hash it) takes it ([ShapeOf]) so that the
// diff need not read the file again before it is shown.
type Shape struct {
	Size  int
	Lines int
	Text  bool
	NoEOL bool
}

// ShapeOf is the shape of b.
func ShapeOf(b []byte) Shape {
	s := Shape{Size: len(b), Text: isText(b)}
	if s.Text && len(b) > 0 {
		s.Lines = bytes.Count(b, []byte{'\n'})
		if s.NoEOL = b[len(b)-1] != '\n'; s.NoEOL {
			s.Lines++
		}
	}
	return s
}

// Created is UnifiedDiff(fromName, toName, nil, b).Dropped(load) for the
// bytes b of a created file whose shape is s, made without them: load
// reads them when the diff is written. ok is false for bytes that are not
// text or a diff over MaxBytes, as UnifiedDiff says.
func Created(fromName, toName string, s Shape, load func() ([]byte, error)) (Diff, bool) {
	if !s.Text {
		return Diff{}, false
	}
	d := Diff{oneSided: true, from: fromName, to: toName}
	if s.Size == 0 {
		return d, true // no lines: the same (empty) file twice
	}
	d.sign, d.lines, d.size, d.noEOL, d.load = '+', s.Lines, s.Size, s.NoEOL, load
	return d, d.Len() <= MaxBytes
}
