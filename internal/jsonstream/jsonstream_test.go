package jsonstream

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

type item struct {
	Name  string            `json:"name"`
	Tags  []string          `json:"tags,omitempty"`
	Extra map[string]any    `json:"extra,omitempty"`
	Sub   *item             `json:"sub,omitempty"`
	Raw   []byte            `json:"raw,omitempty"`
	Kids  []item            `json:"kids"`
	Pairs map[string][2]int `json:"pairs,omitempty"`
}

type embedded struct {
	item
	Unified string `json:"unified,omitempty"`
}

// ptrMarshal marshals through a pointer receiver: only when addressable.
type ptrMarshal struct{ N int }

func (p *ptrMarshal) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]int{"n_times_two": p.N * 2})
}

type data struct {
	Profile  string     `json:"profile"`
	Targets  []string   `json:"targets"`
	Changes  []embedded `json:"changes"`
	Summary  struct{ A int }
	Items    []item       `json:"items,omitempty"`
	Marshals []ptrMarshal `json:"marshals"`
	Nested   struct {
		Deep []int `json:"deep"`
	} `json:"nested"`
	Empty   []item `json:"empty"`
	Nil     []item `json:"nil"`
	NoTag   []int
	Skipped []int `json:"-"`
	AsStr   int   `json:"as_str,string"`
}

type envelope struct {
	OK       bool     `json:"ok"`
	Data     any      `json:"data"`
	Warnings []string `json:"warnings"`
}

func sample(n int) *envelope {
	d := &data{Profile: "p<&>", Targets: []string{"codex"}, AsStr: 7}
	for i := range n {
		e := embedded{item: item{Name: strings.Repeat("x", i) + "<a&b>\n\"q\"", Tags: []string{"t"}, Raw: []byte{1, 2}}, Unified: "--- a\n+++ b\n"}
		if i%2 == 0 {
			e.Extra = map[string]any{"k": []any{1, "two", nil}, "e": map[string]any{}}
			e.Sub = &item{Name: "sub", Kids: []item{{Name: "kid"}}}
		}
		d.Changes = append(d.Changes, e)
		d.Items = append(d.Items, item{Name: "i", Kids: []item{}})
		d.Marshals = append(d.Marshals, ptrMarshal{N: i})
		d.Nested.Deep = append(d.Nested.Deep, i)
		d.NoTag = append(d.NoTag, i)
		d.Skipped = append(d.Skipped, i)
	}
	d.Empty = []item{}
	return &envelope{OK: true, Data: d, Warnings: []string{"w"}}
}

func whole(t *testing.T, v any, opts Options) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := newEncoder(&buf, opts, "").Encode(v); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestEncodeMatchesEncoder: streamed output is byte for byte what
// json.Encoder writes, indented or compact, escaping HTML or not, for
// arrays below and above the streaming length.
func TestEncodeMatchesEncoder(t *testing.T) {
	for _, opts := range []Options{
		{Indent: "  ", MinLen: 2},
		{Indent: "  ", EscapeHTML: true, MinLen: 2},
		{Indent: "\t", MinLen: 3},
		{MinLen: 2},
		{EscapeHTML: true, MinLen: 2},
		{Indent: "  "},
	} {
		for _, n := range []int{0, 1, 2, 5, 70} {
			for _, v := range []any{sample(n), *sample(n), sample(n).Data, []any{sample(n)}, map[string]any{"e": sample(n)}} {
				want := whole(t, v, opts)
				var got bytes.Buffer
				if err := Encode(&got, v, opts); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got.Bytes(), want) {
					t.Fatalf("opts %+v, n %d, %T: streamed output differs\n got: %s\nwant: %s", opts, n, v, got.Bytes(), want)
				}
			}
		}
	}
}

// TestEncodeCutsLongArrays: the long arrays are really cut out of the
// document encoded whole (else nothing is streamed).
func TestEncodeCutsLongArrays(t *testing.T) {
	var cuts []cut
	small, changed := shrinkValue(sample(5), 2, &cuts)
	if !changed || len(cuts) != 5 {
		t.Fatalf("cut %d arrays (changed %v), want 5 (targets has 1 element, empty none)", len(cuts), changed)
	}
	if got := small.Data.(*data); len(got.Changes) != 1 || len(got.Nested.Deep) != 1 {
		t.Errorf("shrunk copy holds %d changes, %d deep", len(got.Changes), len(got.Nested.Deep))
	}
	if n := len(sample(5).Data.(*data).Changes); n != 5 {
		t.Errorf("the original lost changes: %d", n)
	}
}

func shrinkValue(e *envelope, minLen int, cuts *[]cut) (*envelope, bool) {
	v, changed := shrink(reflect.ValueOf(e), nil, minLen, cuts)
	return v.Interface().(*envelope), changed
}

// conflict has a tag encoding/json finds invalid, so it names the field
// by its Go name.
type conflict struct {
	A []int `json:"x\\y"`
	C []int `json:"c"`
}

// TestEncodeFallsBackWhenItCannotFindAnArray: a document whose arrays it
// cannot place is encoded whole, still byte for byte.
func TestEncodeFallsBackWhenItCannotFindAnArray(t *testing.T) {
	v := conflict{A: []int{1, 2, 3}, C: []int{7, 8, 9}}
	opts := Options{Indent: "  ", MinLen: 2}
	var got bytes.Buffer
	if err := Encode(&got, v, opts); err != nil {
		t.Fatal(err)
	}
	if want := whole(t, v, opts); !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("got %s, want %s", got.Bytes(), want)
	}
}

type failing struct{}

func (failing) MarshalJSON() ([]byte, error) { return nil, errors.New("no") }

// TestEncodeReportsElementErrors: an element that cannot be encoded is an
// error, as with json.Encoder.
func TestEncodeReportsElementErrors(t *testing.T) {
	v := struct {
		L []failing `json:"l"`
	}{L: make([]failing, 3)}
	if err := Encode(&bytes.Buffer{}, v, Options{MinLen: 2}); err == nil {
		t.Fatal("no error")
	}
}

// appended writes its own JSON (jsonstream.Appender) as encoding/json
// would, and counts the calls.
type appended struct {
	N     int `json:"n"`
	calls *int
}

func (a *appended) AppendJSON(dst []byte, prefix, indent string, escapeHTML bool) ([]byte, error) {
	*a.calls++
	if indent == "" {
		return fmt.Appendf(dst, `{"n":%d}`, a.N), nil
	}
	return fmt.Appendf(dst, "{\n%s%s\"n\": %d\n%s}", prefix, indent, a.N, prefix), nil
}

// TestEncodeLetsAppendersWriteThemselves: a long array's elements that are
// Appenders write their own JSON, in place of encoding/json's.
func TestEncodeLetsAppendersWriteThemselves(t *testing.T) {
	calls := 0
	v := struct {
		L []appended `json:"l"`
	}{}
	for i := range 3 {
		v.L = append(v.L, appended{N: i, calls: &calls})
	}
	for _, opts := range []Options{{Indent: "  ", MinLen: 2}, {MinLen: 2}} {
		calls = 0
		var got bytes.Buffer
		if err := Encode(&got, v, opts); err != nil {
			t.Fatal(err)
		}
		if want := whole(t, v, opts); !bytes.Equal(got.Bytes(), want) || calls != 3 {
			t.Fatalf("%d calls; got %s, want %s", calls, got.Bytes(), want)
		}
	}
}

// TestAppendIndentMatchesIndent: AppendIndent indents as json.Indent does,
// strings with escaped quotes and backslashes included.
func TestAppendIndentMatchesIndent(t *testing.T) {
	docs := []any{sample(3), sample(0), map[string]any{"a": "x\\", "b\\\"": []any{"\\\\\"", map[string]any{}, []any{}, nil, 1.5, true},
		"c": []any{[]any{}, map[string]any{"": ""}}}, "", []any{}, 7, `"\`}
	for _, v := range docs {
		compact, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		compact = append(compact, '\n')
		for _, ind := range [][2]string{{"", "  "}, {"    ", "\t"}, {">", ""}} {
			var want bytes.Buffer
			if err := json.Indent(&want, compact, ind[0], ind[1]); err != nil {
				t.Fatal(err)
			}
			if got := AppendIndent([]byte("x"), compact, ind[0], ind[1]); string(got) != "x"+want.String() {
				t.Errorf("%q %q:\ngot  %s\nwant %s", ind[0], ind[1], got[1:], want.Bytes())
			}
		}
	}
}

// TestEncodeWritesMadeArrays: an array of Options.Arrays is written in
// place of the document's empty one, element by element as made, byte
// for byte as if the document held them, beside arrays cut as usual; a
// path with no empty array there is an error, not a guess.
func TestEncodeWritesMadeArrays(t *testing.T) {
	for _, opts := range []Options{{Indent: "  ", EscapeHTML: true, MinLen: 2}, {MinLen: 2}, {Indent: "\t"}} {
		for _, n := range []int{0, 1, 3, 70} {
			full := sample(n)
			d := full.Data.(*data)
			items := d.Items
			if items == nil {
				items = []item{}
			}
			d.Empty = items // "empty" has no omitempty: [] when none
			want := whole(t, full, opts)
			d.Empty = []item{}
			made := opts
			made.Arrays = []Array{{Path: []string{"data", "empty"}, N: len(items), Elem: func(i int) any { return &items[i] }}}
			var got bytes.Buffer
			if err := Encode(&got, full, made); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Fatalf("opts %+v, n %d: output differs\n got: %s\nwant: %s", opts, n, got.Bytes(), want)
			}
		}
	}
	d := sample(3)
	for _, path := range [][]string{{"data", "nope"}, {"data", "changes"}} {
		opts := Options{Arrays: []Array{{Path: path, N: 1, Elem: func(int) any { return &item{} }}}}
		if err := Encode(&bytes.Buffer{}, d, opts); err == nil {
			t.Errorf("an array at %q, missing or not empty, was accepted", path)
		}
	}
}
