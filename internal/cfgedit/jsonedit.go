package cfgedit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/tailscale/hujson"
)

// jsonParse parses data (JSON or JWCC) into a syntax tree that packs back
// to exactly data. Empty data is an empty object.
func jsonParse(data []byte) (hujson.Value, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return hujson.Value{BeforeExtra: hujson.Extra(data), Value: &hujson.Object{}}, nil
	}
	v, err := hujson.Parse(data)
	if err != nil {
		return v, jsonSyntaxError(data, err)
	}
	if _, ok := v.Value.(*hujson.Object); !ok {
		return v, &SyntaxError{Line: lineOf(data, v.StartOffset), Msg: "the document is not a JSON object"}
	}
	return v, nil
}

// jsonSyntaxError turns hujson's "hujson: line 3, column 5: …" or
// "… at offset N" errors into a SyntaxError with a line.
func jsonSyntaxError(data []byte, err error) error {
	msg := err.Error()
	var line, col, off int
	if i := strings.Index(msg, "line "); i >= 0 {
		if _, e := fmt.Sscanf(msg[i:], "line %d, column %d", &line, &col); e == nil {
			return &SyntaxError{Line: line, Msg: msg}
		}
	}
	if i := strings.LastIndex(msg, "offset "); i >= 0 {
		if _, e := fmt.Sscanf(msg[i:], "offset %d", &off); e == nil {
			return &SyntaxError{Line: lineOf(data, off), Msg: msg}
		}
	}
	return &SyntaxError{Msg: msg}
}

// member finds name in obj.
func member(obj *hujson.Object, name string) int {
	for i, m := range obj.Members {
		if lit, ok := m.Name.Value.(hujson.Literal); ok && lit.String() == name {
			return i
		}
	}
	return -1
}

// jsonContainer walks container from the root object. With create, missing
// objects are appended; else a missing one returns nil. indent is the
// indentation of the container's members, and unit the file's indent step.
func jsonContainer(root *hujson.Value, data []byte, container []string, create bool) (obj *hujson.Object, indent, unit string, err error) {
	eol := eolOf(data)
	obj = root.Value.(*hujson.Object)
	indent, unit = "", guessUnit(obj)
	for depth, key := range container {
		i := member(obj, key)
		if i < 0 {
			if !create {
				return nil, "", "", nil
			}
			sub := &hujson.Object{}
			appendMember(obj, key, hujson.Value{Value: sub}, indent+unit, indent, eol)
			i = len(obj.Members) - 1
		}
		m := &obj.Members[i]
		sub, ok := m.Value.Value.(*hujson.Object)
		if !ok {
			return nil, "", "", &SyntaxError{Line: lineOf(data, m.Value.StartOffset),
				Msg: fmt.Sprintf("%q is not an object", strings.Join(container[:depth+1], "."))}
		}
		indent = memberIndent(obj, i, indent+unit)
		obj = sub
	}
	return obj, indent + unit, unit, nil
}

// guessUnit is the indent step of the file: the indentation of the root's
// first member, else two spaces.
func guessUnit(root *hujson.Object) string {
	if len(root.Members) > 0 {
		if ind := lastLine(root.Members[0].Name.BeforeExtra); ind != "" && strings.Trim(ind, " \t") == "" {
			return ind
		}
	}
	return "  "
}

// memberIndent is the indentation of member i of obj, else def.
func memberIndent(obj *hujson.Object, i int, def string) string {
	ind := lastLine(obj.Members[i].Name.BeforeExtra)
	if strings.Contains(string(obj.Members[i].Name.BeforeExtra), "\n") && strings.Trim(ind, " \t") == "" {
		return ind
	}
	return def
}

// lastLine is what follows the last newline of extra (all of it without one).
func lastLine(extra hujson.Extra) string {
	s := string(extra)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// appendMember adds key: v as obj's last member, on its own line indented
// by indent, keeping a trailing comma if the object had one. closing is
// the indentation of the object's closing brace.
func appendMember(obj *hujson.Object, key string, v hujson.Value, indent, closing, eol string) {
	name := hujson.Value{BeforeExtra: hujson.Extra(eol + indent), Value: hujson.String(key)}
	trailing := false
	if n := len(obj.Members); n > 0 {
		trailing = obj.Members[n-1].Value.AfterExtra != nil
		if ind := lastLine(obj.Members[n-1].Name.BeforeExtra); strings.Contains(string(obj.Members[n-1].Name.BeforeExtra), "\n") && strings.Trim(ind, " \t") == "" {
			name.BeforeExtra = hujson.Extra(eol + ind)
		}
	} else if !strings.Contains(string(obj.AfterExtra), "\n") || strings.Trim(string(obj.AfterExtra), " \t\r\n") != "" {
		// An empty object ({} or { }) opens up to hold the member; one that
		// only holds a comment keeps it before the closing brace.
		obj.AfterExtra = append(obj.AfterExtra, eol+closing...)
	}
	v.BeforeExtra = hujson.Extra(" ")
	if trailing {
		v.AfterExtra = hujson.Extra{}
	} else {
		v.AfterExtra = nil
	}
	obj.Members = append(obj.Members, hujson.ObjectMember{Name: name, Value: v})
}

// renderJSON renders value as an indented JSON tree whose inner lines start
// with indent.
func renderJSON(value any, indent, unit, eol string) (hujson.Value, error) {
	b, err := json.Marshal(value)
	if err != nil {
		return hujson.Value{}, err
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, b, indent, unit); err != nil {
		return hujson.Value{}, err
	}
	return hujson.Parse(bytes.ReplaceAll(buf.Bytes(), []byte("\n"), []byte(eol)))
}

func jsonGet(data []byte, container []string, name string) ([]byte, error) {
	root, err := jsonParse(data)
	if err != nil {
		return nil, err
	}
	obj, _, _, err := jsonContainer(&root, data, container, false)
	if err != nil || obj == nil {
		return nil, err
	}
	i := member(obj, name)
	if i < 0 {
		return nil, nil
	}
	return jsonCanonical(obj.Members[i].Value)
}

// jsonCanonical is the canonical JSON of one value of a tree.
func jsonCanonical(v hujson.Value) ([]byte, error) {
	c := v.Clone()
	c.Standardize()
	var x any
	d := json.NewDecoder(bytes.NewReader(c.Pack()))
	d.UseNumber()
	if err := d.Decode(&x); err != nil {
		return nil, err
	}
	return json.Marshal(x)
}

func jsonSet(data []byte, container []string, name string, value any) ([]byte, error) {
	root, err := jsonParse(data)
	if err != nil {
		return nil, err
	}
	wasEmpty := len(bytes.TrimSpace(data)) == 0
	obj, indent, unit, err := jsonContainer(&root, data, container, true)
	if err != nil {
		return nil, err
	}
	if i := member(obj, name); i >= 0 {
		m := &obj.Members[i]
		nv, err := renderJSON(value, memberIndent(obj, i, indent), unit, eolOf(data))
		if err != nil {
			return nil, err
		}
		m.Value.Value = nv.Value
	} else {
		nv, err := renderJSON(value, indent, unit, eolOf(data))
		if err != nil {
			return nil, err
		}
		appendMember(obj, name, nv, indent, strings.TrimSuffix(indent, unit), eolOf(data))
	}
	if wasEmpty {
		// A new file: a closing newline, and the root's brace on its own line.
		ro := root.Value.(*hujson.Object)
		ro.AfterExtra = hujson.Extra("\n")
		root.BeforeExtra, root.AfterExtra = nil, hujson.Extra("\n")
	}
	return root.Pack(), nil
}

func jsonRemove(data []byte, container []string, name string) ([]byte, error) {
	root, err := jsonParse(data)
	if err != nil {
		return nil, err
	}
	obj, _, _, err := jsonContainer(&root, data, container, false)
	if err != nil || obj == nil {
		return data, err
	}
	i := member(obj, name)
	if i < 0 {
		return data, nil
	}
	last := i == len(obj.Members)-1
	trailing := obj.Members[len(obj.Members)-1].Value.AfterExtra != nil
	obj.Members = append(obj.Members[:i], obj.Members[i+1:]...)
	if n := len(obj.Members); last && n > 0 && !trailing {
		// The new last member loses the comma that separated it.
		obj.AfterExtra = append(append(hujson.Extra{}, obj.Members[n-1].Value.AfterExtra...), obj.AfterExtra...)
		obj.Members[n-1].Value.AfterExtra = nil
	}
	if len(obj.Members) == 0 && strings.Trim(string(obj.AfterExtra), " \t\r\n") == "" {
		obj.AfterExtra = nil // {} rather than a brace left alone on a line
	}
	return root.Pack(), nil
}

func jsonNames(data []byte, container []string) ([]string, error) {
	root, err := jsonParse(data)
	if err != nil {
		return nil, err
	}
	obj, _, _, err := jsonContainer(&root, data, container, false)
	if err != nil || obj == nil {
		return nil, err
	}
	out := make([]string, 0, len(obj.Members))
	for _, m := range obj.Members {
		if lit, ok := m.Name.Value.(hujson.Literal); ok {
			out = append(out, lit.String())
		}
	}
	return out, nil
}

// jsonDecode decodes a JWCC document into plain values.
func jsonDecode(data []byte) (map[string]any, error) {
	root, err := jsonParse(data)
	if err != nil {
		return nil, err
	}
	c := root.Clone()
	c.Standardize()
	var doc map[string]any
	if err := json.Unmarshal(c.Pack(), &doc); err != nil {
		return nil, errors.Join(&SyntaxError{Msg: err.Error()})
	}
	return doc, nil
}

// JSONEntries returns the canonical JSON of every entry of container in one
// parse (a large ~/.claude.json is read once per plan, not once per
// server). A missing container is an empty map.
func JSONEntries(data []byte, container []string) (map[string][]byte, error) {
	root, err := jsonParse(data)
	if err != nil {
		return nil, err
	}
	obj, _, _, err := jsonContainer(&root, data, container, false)
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	if obj == nil {
		return out, nil
	}
	for _, m := range obj.Members {
		lit, ok := m.Name.Value.(hujson.Literal)
		if !ok {
			continue
		}
		if _, dup := out[lit.String()]; dup {
			continue // the first wins, as Get and Set see it
		}
		c, err := jsonCanonical(m.Value)
		if err != nil {
			return nil, err
		}
		out[lit.String()] = c
	}
	return out, nil
}
