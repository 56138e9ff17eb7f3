package cfgedit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// tomlSection is one `[table]` of a TOML document, by byte offsets.
type tomlSection struct {
	keys  []string
	array bool // [[array table]]
	// start is the start of the header's line; bodyEnd the end of the line
	// of its last key/value (or of the header when it has none), newline
	// included.
	start, bodyEnd int
}

// tomlKV is a key/value outside any header naming it, with its full path.
type tomlKV struct {
	path []string
	off  int
}

// tomlScan finds the sections of data with go-toml's parser, and checks
// that the whole document decodes.
func tomlScan(data []byte) ([]tomlSection, []tomlKV, error) {
	if _, err := tomlDecode(data); err != nil {
		return nil, nil, err
	}
	var p unstable.Parser
	p.Reset(data)
	var secs []tomlSection
	var kvs []tomlKV
	var table []string
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			var keys []string
			first := -1
			it := e.Key()
			for it.Next() {
				n := it.Node()
				if first < 0 {
					first = int(n.Raw.Offset)
				}
				keys = append(keys, string(n.Data))
			}
			start := lineStart(data, first)
			secs = append(secs, tomlSection{keys: keys, array: e.Kind == unstable.ArrayTable, start: start, bodyEnd: lineEnd(data, first)})
			table = keys
		case unstable.KeyValue:
			var path []string
			it := e.Key()
			for it.Next() {
				path = append(path, string(it.Node().Data))
			}
			end := lineEnd(data, int(e.Raw.Offset+e.Raw.Length))
			if len(secs) > 0 {
				secs[len(secs)-1].bodyEnd = end
			}
			kvs = append(kvs, tomlKV{path: append(slices.Clone(table), path...), off: int(e.Raw.Offset)})
		}
	}
	if err := p.Error(); err != nil {
		return nil, nil, tomlSyntaxError(data, err)
	}
	return secs, kvs, nil
}

func lineStart(data []byte, off int) int {
	if i := bytes.LastIndexByte(data[:off], '\n'); i >= 0 {
		return i + 1
	}
	return 0
}

// lineEnd is the offset after the newline ending the line holding off (or
// the end of data).
func lineEnd(data []byte, off int) int {
	if off > len(data) {
		return len(data)
	}
	if i := bytes.IndexByte(data[off:], '\n'); i >= 0 {
		return off + i + 1
	}
	return len(data)
}

func tomlDecode(data []byte) (map[string]any, error) {
	var doc map[string]any
	if err := toml.Unmarshal(data, &doc); err != nil {
		return nil, tomlSyntaxError(data, err)
	}
	if doc == nil {
		doc = map[string]any{}
	}
	return doc, nil
}

func tomlSyntaxError(data []byte, err error) error {
	var de *toml.DecodeError
	if errors.As(err, &de) {
		row, _ := de.Position()
		return &SyntaxError{Line: row, Msg: de.Error()}
	}
	var pe *unstable.ParserError
	if errors.As(err, &pe) && len(pe.Highlight) > 0 {
		// Highlight aliases the input: its position is its offset.
		if off := cap(data) - cap(pe.Highlight); off >= 0 && off <= len(data) {
			return &SyntaxError{Line: lineOf(data, off), Msg: pe.Message}
		}
	}
	return &SyntaxError{Msg: err.Error()}
}

// entryPath is container + name.
func entryPath(container []string, name string) []string {
	return append(slices.Clone(container), name)
}

func hasPrefix(keys, prefix []string) bool {
	return len(keys) >= len(prefix) && slices.Equal(keys[:len(prefix)], prefix)
}

// tomlFind returns the index of the entry's own section, or -1. An entry
// defined without a header of its own (an inline table, dotted keys) is
// refused: agentpack edits only whole tables.
func tomlFind(data []byte, secs []tomlSection, kvs []tomlKV, container []string, name string) (int, error) {
	want := entryPath(container, name)
	found := -1
	for i, s := range secs {
		if slices.Equal(s.keys, want) {
			if s.array {
				return -1, &SyntaxError{Line: lineOf(data, s.start), Msg: fmt.Sprintf("[[%s]] is an array of tables; agentpack expects the table [%s]", strings.Join(want, "."), strings.Join(want, "."))}
			}
			found = i
		}
	}
	for _, kv := range kvs {
		// The container (or a parent) given as a value cannot take tables;
		// the entry given as dotted keys or an inline table has no table.
		if hasPrefix(container, kv.path) || found < 0 && hasPrefix(kv.path, want) {
			return -1, &SyntaxError{Line: lineOf(data, kv.off), Msg: fmt.Sprintf("%s is defined inline; agentpack edits only a table of its own, [%s]", strings.Join(kv.path, "."), strings.Join(want, "."))}
		}
	}
	return found, nil
}

func tomlGet(data []byte, container []string, name string) ([]byte, error) {
	secs, kvs, err := tomlScan(data)
	if err != nil {
		return nil, err
	}
	i, err := tomlFind(data, secs, kvs, container, name)
	if err != nil || i < 0 {
		return nil, err
	}
	// The entry is its own table: decode that section alone, so tables of
	// its own below it ([mcp_servers.x.tools.y], the user's approvals) are
	// not part of it.
	doc, err := tomlDecode(data[secs[i].start:secs[i].bodyEnd])
	if err != nil {
		return nil, err
	}
	var v any = doc
	for _, k := range secs[i].keys {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	if v == nil {
		v = map[string]any{}
	}
	return json.Marshal(v)
}

func tomlSet(data []byte, container []string, name string, value any) ([]byte, error) {
	secs, kvs, err := tomlScan(data)
	if err != nil {
		return nil, err
	}
	i, err := tomlFind(data, secs, kvs, container, name)
	if err != nil {
		return nil, err
	}
	text, err := renderTOMLTable(entryPath(container, name), value)
	if err != nil {
		return nil, err
	}
	eol := []byte(eolOf(data))
	text = bytes.ReplaceAll(text, []byte("\n"), eol)
	var out []byte
	if i >= 0 {
		s := secs[i]
		out = append(out, data[:s.start]...)
		out = append(out, text...)
		if s.bodyEnd == len(data) && !bytes.HasSuffix(data, []byte("\n")) {
			out = bytes.TrimSuffix(out, eol)
		}
		return append(out, data[s.bodyEnd:]...), nil
	}
	// A new entry goes after the last table of the container, else at the end.
	at := -1
	for _, s := range secs {
		if hasPrefix(s.keys, container) && len(s.keys) > len(container) {
			at = s.bodyEnd
		}
	}
	if at < 0 {
		out = append(out, data...)
		if len(out) > 0 && !bytes.HasSuffix(out, []byte("\n")) {
			out = append(out, eol...)
		}
		if len(bytes.TrimSpace(out)) > 0 && !bytes.HasSuffix(out, append(append([]byte{}, eol...), eol...)) {
			out = append(out, eol...)
		}
		return append(out, text...), nil
	}
	out = append(out, data[:at]...)
	if !bytes.HasSuffix(out, []byte("\n")) {
		out = append(out, eol...)
	}
	out = append(out, eol...)
	out = append(out, text...)
	return append(out, data[at:]...), nil
}

func tomlRemove(data []byte, container []string, name string) ([]byte, error) {
	secs, kvs, err := tomlScan(data)
	if err != nil {
		return nil, err
	}
	i, err := tomlFind(data, secs, kvs, container, name)
	if err != nil || i < 0 {
		return data, err
	}
	// The entry goes with the tables below it: left alone they would define
	// a server without a command.
	want := entryPath(container, name)
	var cut [][2]int
	for _, s := range secs {
		if hasPrefix(s.keys, want) {
			end := s.bodyEnd
			for end < len(data) { // blank lines after it go too
				le := lineEnd(data, end)
				if len(bytes.TrimSpace(data[end:le])) > 0 {
					break
				}
				end = le
			}
			cut = append(cut, [2]int{s.start, end})
		}
	}
	out := make([]byte, 0, len(data))
	prev := 0
	for _, c := range cut {
		out = append(out, data[prev:c[0]]...)
		prev = c[1]
	}
	out = append(out, data[prev:]...)
	if prev == len(data) {
		// The entry was last: no blank line left dangling at the end.
		trimmed := bytes.TrimRight(out, " \t\r\n")
		if len(trimmed) < len(out) {
			out = append(trimmed, eolOf(data)...)
		}
		if len(trimmed) == 0 {
			out = out[:0]
		}
	}
	return out, nil
}

func tomlNames(data []byte, container []string) ([]string, error) {
	doc, err := tomlDecode(data)
	if err != nil {
		return nil, err
	}
	var v any = doc
	for _, k := range container {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	m, _ := v.(map[string]any)
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out, nil
}

// tomlKeyOrder puts the keys of an MCP server in the order people write
// them; others follow alphabetically.
var tomlKeyOrder = []string{"command", "args", "env", "env_vars", "cwd", "url", "bearer_token_env_var", "http_headers", "env_http_headers"}

// renderTOMLTable renders value (an object) as the table [path].
func renderTOMLTable(path []string, value any) ([]byte, error) {
	m, err := plain(value)
	if err != nil {
		return nil, err
	}
	obj, ok := m.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("a TOML entry must be an object")
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := slices.Index(tomlKeyOrder, keys[i]), slices.Index(tomlKeyOrder, keys[j])
		if a < 0 {
			a = len(tomlKeyOrder)
		}
		if b < 0 {
			b = len(tomlKeyOrder)
		}
		if a != b {
			return a < b
		}
		return keys[i] < keys[j]
	})
	var buf bytes.Buffer
	buf.WriteByte('[')
	for i, k := range path {
		if i > 0 {
			buf.WriteByte('.')
		}
		buf.WriteString(tomlKey(k))
	}
	buf.WriteString("]\n")
	for _, k := range keys {
		buf.WriteString(tomlKey(k))
		buf.WriteString(" = ")
		if err := tomlValue(&buf, obj[k]); err != nil {
			return nil, err
		}
		buf.WriteByte('\n')
	}
	return buf.Bytes(), nil
}

// plain turns value into JSON's plain types (map[string]any, []any,
// string, json.Number, bool).
func plain(value any) (any, error) {
	b, err := json.Marshal(value)
	if err != nil {
		return nil, err
	}
	var v any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	err = d.Decode(&v)
	return v, err
}

func tomlValue(buf *bytes.Buffer, v any) error {
	switch x := v.(type) {
	case string:
		buf.WriteString(tomlString(x))
	case bool:
		buf.WriteString(strconv.FormatBool(x))
	case json.Number:
		buf.WriteString(x.String())
	case []any:
		buf.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				buf.WriteString(", ")
			}
			if err := tomlValue(buf, e); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if len(keys) == 0 {
			buf.WriteString("{}")
			return nil
		}
		buf.WriteString("{ ")
		for i, k := range keys {
			if i > 0 {
				buf.WriteString(", ")
			}
			buf.WriteString(tomlKey(k))
			buf.WriteString(" = ")
			if err := tomlValue(buf, x[k]); err != nil {
				return err
			}
		}
		buf.WriteString(" }")
	default:
		return fmt.Errorf("cannot write %T as TOML", v)
	}
	return nil
}

// tomlKey writes k bare when TOML allows it, else quoted.
func tomlKey(k string) string {
	if k == "" {
		return `""`
	}
	for _, r := range k {
		if !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return tomlString(k)
		}
	}
	return k
}

// tomlString is s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
