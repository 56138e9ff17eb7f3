package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// argSchema is a tool's input schema compiled for checking calls. It knows
// the part of JSON Schema (draft 2020-12) the schemas in toolschemas.go are
// written in: one type name, properties, required, additionalProperties
// false, items, enum and const of strings or booleans, maxLength and
// description. Compiling refuses every other keyword, so a schema never
// promises a check that is not made.
//
// Its problems are worded as santhosh-tekuri/jsonschema words them (a test
// compares the two on every tool); that library is not linked into the
// binary because its package init, which compiles every draft's
// meta-schema, cost each CLI command 2.5 ms before it did anything.
type argSchema struct {
	typ      string // "" accepts every type
	props    map[string]*argSchema
	required []string
	// closed is additionalProperties: false.
	closed bool
	items  *argSchema
	enum   []any
	// konst is the const value when hasConst.
	konst     any
	hasConst  bool
	maxLength int // -1 when unlimited
	// minimum and maximum bound numbers when not nil.
	minimum, maximum *big.Rat
}

// argTypes are the type names an argSchema can check.
var argTypes = map[string]bool{"string": true, "boolean": true, "array": true, "object": true, "integer": true, "number": true}

// compileArgSchema compiles one JSON schema document.
func compileArgSchema(raw []byte) (*argSchema, error) {
	doc, err := decodeJSON(raw)
	if err != nil {
		return nil, err
	}
	return compileArgNode(doc, "#")
}

func compileArgNode(v any, at string) (*argSchema, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: a schema must be an object", at)
	}
	s := &argSchema{maxLength: -1}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if err := s.compileKeyword(k, m[k], at+"/"+k); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (s *argSchema) compileKeyword(k string, v any, at string) error {
	bad := func(want string) error { return fmt.Errorf("%s: want %s", at, want) }
	switch k {
	case "description":
		if _, ok := v.(string); !ok {
			return bad("a string")
		}
	case "type":
		t, _ := v.(string)
		if !argTypes[t] {
			return bad("one type name")
		}
		s.typ = t
	case "properties":
		m, ok := v.(map[string]any)
		if !ok {
			return bad("an object")
		}
		s.props = make(map[string]*argSchema, len(m))
		for name, p := range m {
			ps, err := compileArgNode(p, at+"/"+name)
			if err != nil {
				return err
			}
			s.props[name] = ps
		}
	case "required":
		list, ok := v.([]any)
		if !ok {
			return bad("an array of names")
		}
		for _, n := range list {
			name, ok := n.(string)
			if !ok {
				return bad("an array of names")
			}
			s.required = append(s.required, name)
		}
	case "additionalProperties":
		if v != false {
			return bad("false (nothing else is supported)")
		}
		s.closed = true
	case "items":
		items, err := compileArgNode(v, at)
		if err != nil {
			return err
		}
		s.items = items
	case "enum":
		list, ok := v.([]any)
		if !ok || len(list) == 0 {
			return bad("a non-empty array")
		}
		for _, e := range list {
			if !isArgScalar(e) {
				return bad("strings and booleans")
			}
		}
		s.enum = list
	case "const":
		if !isArgScalar(v) {
			return bad("a string or a boolean")
		}
		s.konst, s.hasConst = v, true
	case "maxLength":
		n, err := strconv.Atoi(fmt.Sprint(v))
		if _, isNum := v.(json.Number); !isNum || err != nil || n < 0 {
			return bad("a non-negative integer")
		}
		s.maxLength = n
	case "minimum", "maximum":
		n, ok := v.(json.Number)
		r, isRat := new(big.Rat).SetString(string(n))
		if !ok || !isRat {
			return bad("a number")
		}
		if k == "minimum" {
			s.minimum = r
		} else {
			s.maximum = r
		}
	default:
		return fmt.Errorf("%s: keyword %q is not supported by the argument validator", at, k)
	}
	return nil
}

func isArgScalar(v any) bool {
	switch v.(type) {
	case string, bool:
		return true
	}
	return false
}

// decodeJSON decodes exactly one JSON value, with numbers as json.Number.
func decodeJSON(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("invalid character after top-level value")
	}
	return v, nil
}

// validate appends v's problems to out; loc is v's location in the
// arguments, one token per level.
func (s *argSchema) validate(v any, loc []string, out *[]problem) {
	if got := jsonTypeName(v); s.typ != "" && got != s.typ && !(s.typ == "integer" && got == "number" && isInteger(v)) {
		*out = append(*out, newProblem(loc, fmt.Sprintf("got %s, want %s", got, s.typ)))
		return
	}
	if s.hasConst && v != s.konst {
		*out = append(*out, newProblem(loc, "value must be "+displayScalar(s.konst)))
		return
	}
	if s.enum != nil && !slices.Contains(s.enum, v) {
		want := make([]string, len(s.enum))
		for i, e := range s.enum {
			want[i] = displayScalar(e)
		}
		if len(want) == 1 {
			*out = append(*out, newProblem(loc, "value must be "+want[0]))
		} else {
			*out = append(*out, newProblem(loc, "value must be one of "+strings.Join(want, ", ")))
		}
		return
	}
	switch v := v.(type) {
	case map[string]any:
		s.validateObject(v, loc, out)
	case []any:
		if s.items != nil {
			for i, item := range v {
				s.items.validate(item, append(loc[:len(loc):len(loc)], strconv.Itoa(i)), out)
			}
		}
	case string:
		if n := utf8.RuneCountInString(v); s.maxLength >= 0 && n > s.maxLength {
			*out = append(*out, newProblem(loc, englishPrinter().Sprintf("maxLength: got %d, want %d", n, s.maxLength)))
		}
	case json.Number:
		s.validateNumber(v, loc, out)
	}
}

// validateNumber checks minimum and maximum.
func (s *argSchema) validateNumber(v json.Number, loc []string, out *[]problem) {
	n, ok := new(big.Rat).SetString(string(v))
	if !ok {
		return
	}
	got, _ := n.Float64()
	if s.minimum != nil && n.Cmp(s.minimum) < 0 {
		want, _ := s.minimum.Float64()
		*out = append(*out, newProblem(loc, englishPrinter().Sprintf("minimum: got %v, want %v", got, want)))
	}
	if s.maximum != nil && n.Cmp(s.maximum) > 0 {
		want, _ := s.maximum.Float64()
		*out = append(*out, newProblem(loc, englishPrinter().Sprintf("maximum: got %v, want %v", got, want)))
	}
}

// isInteger reports whether a number has no fraction (1.0 is one).
func isInteger(v any) bool {
	n, ok := v.(json.Number)
	if !ok {
		return false
	}
	r, ok := new(big.Rat).SetString(string(n))
	return ok && r.IsInt()
}

// englishPrinter formats the numbers in problems with English digit
// grouping; it is made on the first problem that has one.
var englishPrinter = sync.OnceValue(func() *message.Printer { return message.NewPrinter(language.English) })

// validateObject reports missing required properties, then the problems
// of each property by name, then the unknown ones.
func (s *argSchema) validateObject(obj map[string]any, loc []string, out *[]problem) {
	for _, name := range s.required {
		if _, ok := obj[name]; !ok {
			*out = append(*out, namedProblem(loc, name, "required argument is missing"))
		}
	}
	names := make([]string, 0, len(obj))
	for name := range obj {
		names = append(names, name)
	}
	slices.Sort(names)
	var unknown []string
	for _, name := range names {
		if p, ok := s.props[name]; ok {
			p.validate(obj[name], append(loc[:len(loc):len(loc)], name), out)
		} else if s.closed {
			unknown = append(unknown, name)
		}
	}
	for _, name := range unknown {
		*out = append(*out, namedProblem(loc, name, "unknown argument"))
	}
}

// newProblem is a problem with the value at loc; its property is the
// top-level argument loc is in.
func newProblem(loc []string, msg string) problem {
	p := problem{pointer: "/" + strings.Join(loc, "/"), message: msg}
	if len(loc) > 0 {
		p.property = loc[0]
	}
	return p
}

// namedProblem is a problem with the property name of the object at loc
// (a missing or unknown one).
func namedProblem(loc []string, name, msg string) problem {
	p := newProblem(loc, msg)
	if p.property == "" {
		p.property = name
	}
	p.pointer = strings.TrimSuffix(p.pointer, "/") + "/" + name
	return p
}

func jsonTypeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// displayScalar shows an enum or const value: strings in single quotes,
// booleans bare.
func displayScalar(v any) string {
	s, ok := v.(string)
	if !ok {
		return fmt.Sprint(v)
	}
	q := strconv.Quote(s)
	q = strings.ReplaceAll(q, `\"`, `"`)
	q = strings.ReplaceAll(q, `'`, `\'`)
	return "'" + q[1:len(q)-1] + "'"
}
