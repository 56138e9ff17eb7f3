package jsonstream

import "strconv"

// ObjectWriter appends JSON objects field by field, laid out byte for byte
// as a json.Encoder set up with SetIndent(prefix, indent) (compact when
// indent is "") and SetEscapeHTML writes a struct: for an [Appender]
// whose fields are few and plain, where encoding/json's reflection and its
// indent pass are most of the work. Keys are written as given (plain
// ASCII names); objects nest up to seven deep.
type ObjectWriter struct {
	Buf            []byte
	prefix, indent string
	html           bool
	depth          int
	fields         [8]int // fields written so far at each depth
}

// NewObjectWriter is an ObjectWriter appending to dst with the Appender's
// settings.
func NewObjectWriter(dst []byte, prefix, indent string, escapeHTML bool) ObjectWriter {
	return ObjectWriter{Buf: dst, prefix: prefix, indent: indent, html: escapeHTML}
}

// Open begins an object: the document's, or after [ObjectWriter.Key] a
// field's.
func (w *ObjectWriter) Open() {
	w.Buf = append(w.Buf, '{')
	w.depth++
	w.fields[w.depth] = 0
}

// Close ends the innermost object; one with no fields is "{}".
func (w *ObjectWriter) Close() {
	if w.fields[w.depth] > 0 {
		w.newline(w.depth - 1)
	}
	w.depth--
	w.Buf = append(w.Buf, '}')
}

// Key begins the next field of the innermost object; its value follows.
func (w *ObjectWriter) Key(k string) {
	if w.fields[w.depth] > 0 {
		w.Buf = append(w.Buf, ',')
	}
	w.fields[w.depth]++
	w.newline(w.depth)
	w.Buf = append(append(append(w.Buf, '"'), k...), '"', ':')
	if w.indent != "" {
		w.Buf = append(w.Buf, ' ')
	}
}

// String writes the field k with the string v.
func (w *ObjectWriter) String(k, v string) {
	w.Key(k)
	w.Buf = AppendString(w.Buf, v, w.html)
}

// Int writes the field k with the number v.
func (w *ObjectWriter) Int(k string, v int64) {
	w.Key(k)
	w.Buf = strconv.AppendInt(w.Buf, v, 10)
}

// Bool writes the field k with v.
func (w *ObjectWriter) Bool(k string, v bool) {
	w.Key(k)
	w.Buf = strconv.AppendBool(w.Buf, v)
}

// Null writes the field k with null.
func (w *ObjectWriter) Null(k string) {
	w.Key(k)
	w.Buf = append(w.Buf, "null"...)
}

// newline starts a line at depth when indenting.
func (w *ObjectWriter) newline(depth int) {
	if w.indent == "" {
		return
	}
	w.Buf = append(append(w.Buf, '\n'), w.prefix...)
	for range depth {
		w.Buf = append(w.Buf, w.indent...)
	}
}
