package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// TestArgSchemaMatchesFullValidator checks argSchema against a complete
// JSON Schema validator (santhosh-tekuri/jsonschema, linked into tests
// only): for every tool and a few hundred argument objects per tool (every
// JSON type in every property, enum misses, strings one past maxLength,
// bad array items, unknown and missing arguments, two bad arguments at
// once, non-objects) both find the same problems, worded the same.
func TestArgSchemaMatchesFullValidator(t *testing.T) {
	checked := 0
	for _, tl := range allTools() {
		limited, err := limitStrings(tl.schema)
		if err != nil {
			t.Fatal(err)
		}
		ours, err := compileArgSchema(limited)
		if err != nil {
			t.Fatalf("%s: %v", tl.name, err)
		}
		full := compileFull(t, tl.name, limited)
		for _, doc := range argCases(t, limited) {
			var got []problem
			v, err := decodeJSON(doc)
			if err != nil {
				t.Fatalf("%s %s: %v", tl.name, doc, err)
			}
			ours.validate(v, nil, &got)
			want := fullProblems(t, full, doc)
			if g, w := problemSet(got), problemSet(want); !slices.Equal(g, w) {
				t.Errorf("%s %s:\n got  %q\n want %q", tl.name, truncate(doc), g, w)
			}
			checked++
		}
	}
	if checked < 1000 {
		t.Errorf("only %d cases checked", checked)
	}
}

// TestArgSchemaRefusesUnknownKeywords: a schema using a keyword argSchema
// cannot check does not compile, so no tool can advertise a check the
// server skips.
func TestArgSchemaRefusesUnknownKeywords(t *testing.T) {
	for _, raw := range []string{
		`{"type":"object","properties":{"n":{"type":"integer","multipleOf":2}}}`,
		`{"type":"object","properties":{"s":{"type":"string","pattern":"^a"}}}`,
		`{"type":"object","additionalProperties":true}`,
		`{"type":["string","null"]}`,
		`{"type":"object","properties":{"s":{"type":"string","minLength":1}}}`,
		`{"type":"object","properties":{"s":{"$ref":"#/x"}}}`,
		`{"enum":[1,2]}`,
		`{"const":{"a":1}}`,
		`{"type":"string","maxLength":-1}`,
		`{"type":"string","maxLength":1.5}`,
		`{"type":"object","properties":{"a":true}}`,
		`{"type":"object"} x`,
	} {
		if _, err := compileArgSchema([]byte(raw)); err == nil {
			t.Errorf("%s compiled", raw)
		}
	}
}

// argCases builds argument objects for one tool schema.
func argCases(t *testing.T, schema []byte) [][]byte {
	var s struct {
		Properties map[string]struct {
			Type  string `json:"type"`
			Enum  []any  `json:"enum"`
			Const any    `json:"const"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(schema, &s); err != nil {
		t.Fatal(err)
	}
	values := []any{"s", "", `it's "quoted"`, strings.Repeat("é", maxStringArg), strings.Repeat("é", maxStringArg+1),
		true, false, 1, 1.5, nil, 0, -3, 50, 51, 1234567, 1e21, json.Number("2.0"), json.Number("1e400"), []any{}, []any{"x"}, []any{1, "missing", nil, []any{}}, map[string]any{"a": 1}}
	valid := map[string]any{}
	var names []string
	for name, p := range s.Properties {
		names = append(names, name)
		switch {
		case p.Const != nil:
			valid[name] = p.Const
		case len(p.Enum) > 0:
			valid[name] = p.Enum[0]
		case p.Type == "boolean":
			valid[name] = true
		case p.Type == "integer":
			valid[name] = 1
		case p.Type == "array":
			valid[name] = []any{}
		default:
			valid[name] = "v"
		}
	}
	slices.Sort(names)
	base := map[string]any{}
	for _, r := range s.Required {
		base[r] = valid[r]
	}
	with := func(m map[string]any, kv ...any) map[string]any {
		out := map[string]any{}
		for k, v := range m {
			out[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			out[kv[i].(string)] = kv[i+1]
		}
		return out
	}
	docs := []any{[]any{}, "x", 1, true, map[string]any{}, base, with(base, "zz", 1), with(base, "zz", 1, "a/b", "x", "it's", nil), valid}
	for _, r := range s.Required {
		m := with(valid)
		delete(m, r)
		docs = append(docs, m)
	}
	for _, name := range names {
		p := s.Properties[name]
		vals := append(slices.Clone(values), p.Enum...)
		vals = append(vals, []any{"nope", []any{"missing", "modified", "nope", true}}...)
		for _, v := range vals {
			docs = append(docs, with(base, name, v), with(valid, name, v, "zz", 0))
		}
	}
	for i, a := range names {
		for _, b := range names[i+1:] {
			docs = append(docs, with(base, a, 1.5, b, []any{2}))
		}
	}
	out := make([][]byte, len(docs))
	for i, d := range docs {
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = b
	}
	return out
}

func compileFull(t *testing.T, name string, schema []byte) *jsonschema.Schema {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	url := "mem:///tools/" + name + ".json"
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

// fullProblems validates doc with the full validator and flattens its
// error tree into problems as the server reported them before argSchema.
func fullProblems(t *testing.T, sch *jsonschema.Schema, doc []byte) []problem {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	err = sch.Validate(v)
	if err == nil {
		return nil
	}
	verr, ok := err.(*jsonschema.ValidationError)
	if !ok {
		t.Fatal(err)
	}
	var out []problem
	collectFull(verr, &out)
	return out
}

func collectFull(e *jsonschema.ValidationError, out *[]problem) {
	if len(e.Causes) > 0 {
		for _, c := range e.Causes {
			collectFull(c, out)
		}
		return
	}
	// The flattening the server did before argSchema, unchanged.
	loc := e.InstanceLocation
	at := "/" + strings.Join(loc, "/")
	property := ""
	if len(loc) > 0 {
		property = loc[0]
	}
	switch k := e.ErrorKind.(type) {
	case *kind.Required:
		for _, name := range k.Missing {
			p := property
			if p == "" {
				p = name
			}
			*out = append(*out, problem{property: p, pointer: strings.TrimSuffix(at, "/") + "/" + name, message: "required argument is missing"})
		}
	case *kind.AdditionalProperties:
		for _, name := range k.Properties {
			p := property
			if p == "" {
				p = name
			}
			*out = append(*out, problem{property: p, pointer: strings.TrimSuffix(at, "/") + "/" + name, message: "unknown argument"})
		}
	default:
		*out = append(*out, problem{property: property, pointer: at, message: e.ErrorKind.LocalizedString(message.NewPrinter(language.English))})
	}
}

// problemSet renders problems sorted: the full validator reports the
// properties of an object in map order.
func problemSet(ps []problem) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = fmt.Sprintf("%s|%s|%s", p.property, p.pointer, p.message)
	}
	slices.Sort(out)
	return out
}

func truncate(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}
