package jsonstream

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestObjectWriterLaysOutAsEncodingJSON: nested, empty and one-field
// objects, each kind of value, indented and compact.
func TestObjectWriterLaysOutAsEncodingJSON(t *testing.T) {
	type inner struct {
		N int64  `json:"n"`
		S string `json:"s"`
	}
	v := struct {
		Empty struct{} `json:"empty"`
		One   struct {
			B bool `json:"b"`
		} `json:"one"`
		In   inner  `json:"in"`
		Null *inner `json:"null"`
		Neg  int64  `json:"neg"`
	}{In: inner{N: 7, S: "<x>"}, Neg: -3}
	v.One.B = true
	write := func(w *ObjectWriter) {
		w.Open()
		w.Key("empty")
		w.Open()
		w.Close()
		w.Key("one")
		w.Open()
		w.Bool("b", true)
		w.Close()
		w.Key("in")
		w.Open()
		w.Int("n", 7)
		w.String("s", "<x>")
		w.Close()
		w.Null("null")
		w.Int("neg", -3)
		w.Close()
	}
	for _, l := range []struct{ prefix, indent string }{{"", ""}, {"", "  "}, {"  ", "\t"}} {
		for _, html := range []bool{false, true} {
			var want bytes.Buffer
			enc := json.NewEncoder(&want)
			enc.SetEscapeHTML(html)
			if l.indent != "" {
				enc.SetIndent(l.prefix, l.indent)
			}
			if err := enc.Encode(v); err != nil {
				t.Fatal(err)
			}
			w := NewObjectWriter(nil, l.prefix, l.indent, html)
			write(&w)
			if got := string(w.Buf) + "\n"; got != want.String() {
				t.Errorf("%q/%q html %v: got\n%s\nwant\n%s", l.prefix, l.indent, html, got, want.String())
			}
		}
	}
}
