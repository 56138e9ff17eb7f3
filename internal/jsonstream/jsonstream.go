// Package jsonstream writes JSON documents with long arrays (the changes of
// a plan of ten thousand files, the files of a snapshot record) byte for
// byte as encoding/json's Encoder does, without building the whole document
// in memory: the document is encoded with each long array cut to one
// element, and each array is then written element by element in its place.
package jsonstream

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"strings"
)

// Options are the json.Encoder settings a document is written with.
type Options struct {
	// Indent is the indent of each level ("" for compact output); there is
	// no prefix.
	Indent string
	// EscapeHTML is json.Encoder's SetEscapeHTML.
	EscapeHTML bool
	// MinLen is the length from which an array is written element by
	// element (default 64); shorter ones are encoded with the rest.
	MinLen int
	// Arrays are arrays made element by element as they are written, for
	// arrays too long to hold (the files of a snapshot of 100,000 files):
	// each is written in place of the empty array the document has at its
	// path.
	Arrays []Array
}

// Array is an array of [Options.Arrays]: N elements, each made by Elem
// when it is written (as a pointer, as a slice's element is reached). An
// element is written before the next is made, so Elem may make each in
// the same value.
type Array struct {
	// Path is the object keys from the document's root to the array.
	Path []string
	N    int
	Elem func(i int) any
}

// Encode writes v to w exactly as a json.Encoder with opts' settings would
// (a trailing newline included). The long arrays it streams are slices in
// the fields of v's structs, reached through pointers, interfaces and
// nested struct fields; a struct or slice with its own marshalling, maps,
// embedded structs and byte slices are encoded whole. An error of an
// element's encoding can come after part of the document was written.
func Encode(w io.Writer, v any, opts Options) error {
	if opts.MinLen <= 0 {
		opts.MinLen = 64
	}
	var cuts []cut
	small, changed := shrink(reflect.ValueOf(v), nil, opts.MinLen, &cuts)
	if !changed && len(opts.Arrays) == 0 {
		return newEncoder(w, opts, "").Encode(v)
	}
	for _, a := range opts.Arrays {
		if a.N > 0 { // none: the document's [] is the array
			cuts = append(cuts, cut{path: a.Path, n: a.N, elem: a.Elem, made: true})
		}
	}
	var head bytes.Buffer
	if err := newEncoder(&head, opts, "").Encode(small.Interface()); err != nil {
		return err
	}
	doc := head.Bytes()
	for i := range cuts {
		var ok bool
		cuts[i].start, cuts[i].end, ok = locate(doc, cuts[i].path)
		switch {
		case !ok && cuts[i].made:
			return fmt.Errorf("jsonstream: no array at %q in the document", cuts[i].path)
		case !ok:
			// A name the walk got wrong (two fields sharing one, an
			// odd tag): encode the value whole rather than guess.
			return Encode(w, v, Options{Indent: opts.Indent, EscapeHTML: opts.EscapeHTML, MinLen: math.MaxInt, Arrays: opts.Arrays})
		case cuts[i].made && string(doc[cuts[i].start:cuts[i].end]) != "[]":
			return fmt.Errorf("jsonstream: the array at %q is not empty in the document", cuts[i].path)
		}
	}
	slices.SortFunc(cuts, func(a, b cut) int { return a.start - b.start })
	at := 0
	for _, c := range cuts {
		if _, err := w.Write(doc[at:c.start]); err != nil {
			return err
		}
		if err := writeArray(w, c.n, c.elem, lineIndent(doc, c.start), opts); err != nil {
			return err
		}
		at = c.end
	}
	_, err := w.Write(doc[at:])
	return err
}

// Appender is an element of a long array that writes its own JSON, for
// an element encoding/json is slow at (a long string it would escape, then
// scan twice more to check and indent it). AppendJSON appends to dst
// exactly what a json.Encoder set up with SetIndent(prefix, indent) (when
// indent is not "") and SetEscapeHTML(escapeHTML) writes for the element,
// without Encode's trailing newline.
type Appender interface {
	AppendJSON(dst []byte, prefix, indent string, escapeHTML bool) ([]byte, error)
}

// cut is one long array: where it is in the shrunk document and its
// elements.
type cut struct {
	path       []string // object keys from the document's root
	n          int
	elem       func(i int) any
	made       bool // one of Options.Arrays
	start, end int  // the array's bytes in the shrunk document
}

func newEncoder(w io.Writer, opts Options, prefix string) *json.Encoder {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(opts.EscapeHTML)
	if opts.Indent != "" {
		enc.SetIndent(prefix, opts.Indent)
	}
	return enc
}

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

// ownMarshalling reports whether encoding/json encodes t through a method
// of t or *t, which a cut could change.
func ownMarshalling(t reflect.Type) bool {
	for _, m := range []reflect.Type{marshalerType, textMarshalerType} {
		if t.Implements(m) || reflect.PointerTo(t).Implements(m) {
			return true
		}
	}
	return false
}

// shrink returns a copy of v whose long slices are cut to their first
// element (so omitempty keeps them), noting each in cuts, and whether it
// cut any; v itself is not changed.
func shrink(v reflect.Value, path []string, minLen int, cuts *[]cut) (reflect.Value, bool) {
	if !v.IsValid() || ownMarshalling(v.Type()) {
		return v, false
	}
	switch v.Kind() {
	case reflect.Interface:
		if v.IsNil() {
			return v, false
		}
		return shrink(v.Elem(), path, minLen, cuts)
	case reflect.Pointer:
		if v.IsNil() {
			return v, false
		}
		inner, changed := shrink(v.Elem(), path, minLen, cuts)
		if !changed {
			return v, false
		}
		p := reflect.New(inner.Type())
		p.Elem().Set(inner)
		return p, true
	case reflect.Struct:
		return shrinkStruct(v, path, minLen, cuts)
	}
	return v, false
}

func shrinkStruct(v reflect.Value, path []string, minLen int, cuts *[]cut) (reflect.Value, bool) {
	t := v.Type()
	var out reflect.Value
	for i := range t.NumField() {
		sf := t.Field(i)
		name, ok := fieldName(sf)
		if !ok {
			continue
		}
		fv := v.Field(i)
		at := append(slices.Clip(path), name)
		var repl reflect.Value
		if fv.Kind() == reflect.Slice && fv.Type().Elem().Kind() != reflect.Uint8 && fv.Len() >= minLen && !ownMarshalling(fv.Type()) {
			// Through a pointer, as the element is reached in its
			// slice: a method on the pointer marshals it the same way.
			*cuts = append(*cuts, cut{path: at, n: fv.Len(), elem: func(i int) any { return fv.Index(i).Addr().Interface() }})
			repl = fv.Slice(0, 1)
		} else if r, changed := shrink(fv, at, minLen, cuts); changed {
			repl = r
		} else {
			continue
		}
		if !out.IsValid() {
			out = reflect.New(t).Elem()
			out.Set(v)
		}
		out.Field(i).Set(repl)
	}
	if !out.IsValid() {
		return v, false
	}
	return out, true
}

// fieldName is the key encoding/json gives an exported, non-embedded
// field, and false for a field this package does not look into.
func fieldName(sf reflect.StructField) (string, bool) {
	if !sf.IsExported() || sf.Anonymous {
		return "", false
	}
	tag := sf.Tag.Get("json")
	if tag == "-" {
		return "", false
	}
	name, opts, _ := strings.Cut(tag, ",")
	if strings.Contains(","+opts+",", ",string,") {
		return "", false
	}
	if name == "" {
		name = sf.Name
	}
	return name, true
}

// locate finds the array at path (object keys from the root) in doc and
// returns its bytes' bounds.
func locate(doc []byte, path []string) (start, end int, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	for _, key := range path {
		if t, err := dec.Token(); err != nil || t != json.Delim('{') {
			return 0, 0, false
		}
		for {
			t, err := dec.Token()
			if err != nil || t == json.Delim('}') {
				return 0, 0, false
			}
			if k, _ := t.(string); k == key {
				break
			}
			if skipValue(dec) != nil {
				return 0, 0, false
			}
		}
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('[') {
		return 0, 0, false
	}
	start = int(dec.InputOffset()) - 1
	if closeValue(dec, 1) != nil {
		return 0, 0, false
	}
	return start, int(dec.InputOffset()), true
}

// skipValue reads the next value of dec whole.
func skipValue(dec *json.Decoder) error {
	t, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := t.(json.Delim); ok && (d == '{' || d == '[') {
		return closeValue(dec, 1)
	}
	return nil
}

// closeValue reads tokens until depth open arrays and objects are closed.
func closeValue(dec *json.Decoder, depth int) error {
	for depth > 0 {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		switch t {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
	}
	return nil
}

// lineIndent is the leading white space of the line holding doc[at].
func lineIndent(doc []byte, at int) string {
	line := doc[bytes.LastIndexByte(doc[:at], '\n')+1 : at]
	return string(line[:len(line)-len(bytes.TrimLeft(line, " \t"))])
}

// writeArray writes the n elements elem makes as the array they make at
// an indent of indent, each encoded on its own.
func writeArray(w io.Writer, n int, elem func(i int) any, indent string, opts Options) error {
	var buf, compact bytes.Buffer
	inner := indent + opts.Indent
	// Each element is encoded compact, then indented by AppendIndent,
	// which copies strings whole: the Encoder's own indent scans every
	// byte of them.
	enc := newEncoder(&compact, Options{EscapeHTML: opts.EscapeHTML}, "")
	buf.WriteByte('[')
	for i := range n {
		if i > 0 {
			buf.WriteByte(',')
		}
		if opts.Indent != "" {
			buf.WriteByte('\n')
			buf.WriteString(inner)
		}
		e := elem(i)
		if a, ok := e.(Appender); ok {
			b, err := a.AppendJSON(buf.AvailableBuffer(), inner, opts.Indent, opts.EscapeHTML)
			if err != nil {
				return err
			}
			buf.Write(b)
		} else {
			compact.Reset()
			if err := enc.Encode(e); err != nil {
				return err
			}
			b := compact.Bytes()[:compact.Len()-1] // Encode's newline
			if opts.Indent != "" {
				b = AppendIndent(buf.AvailableBuffer(), b, inner, opts.Indent)
			}
			buf.Write(b)
		}
		if buf.Len() >= 32<<10 {
			if _, err := w.Write(buf.Bytes()); err != nil {
				return err
			}
			buf.Reset()
		}
	}
	if opts.Indent != "" {
		buf.WriteByte('\n')
		buf.WriteString(indent)
	}
	buf.WriteByte(']')
	_, err := w.Write(buf.Bytes())
	return err
}
