// Package cfgedit edits one named entry of a container in a shared config
// file (an MCP server under `mcpServers` in a JSON/JSONC file, or a
// `[mcp_servers.<name>]` table in TOML) by editing the text: every byte
// outside the edited entry is kept as it was, comments, trailing commas,
// key order and indentation included. The functions are pure: bytes in,
// bytes out.
//
// An entry's identity for drift is [Canonical]: the entry's value as JSON
// with sorted keys, whatever the file's syntax.
package cfgedit

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Format is the syntax of a config file.
type Format string

// Formats.
const (
	JSON Format = "json" // JSON with comments and trailing commas (JWCC) is accepted and kept
	TOML Format = "toml"
)

// Valid reports whether f is a known format.
func (f Format) Valid() bool { return f == JSON || f == TOML }

// SyntaxError is a config file that does not parse; Line is 1-based (0 when
// unknown).
type SyntaxError struct {
	Line int
	Msg  string
}

func (e *SyntaxError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	}
	return e.Msg
}

// Get returns the canonical JSON of entry name in container (nil when
// absent). An empty data is an empty document.
func Get(f Format, data []byte, container []string, name string) ([]byte, error) {
	switch f {
	case TOML:
		return tomlGet(data, container, name)
	default:
		return jsonGet(data, container, name)
	}
}

// Set writes entry name in container with value (a JSON-able value of
// strings, string lists and string maps), replacing the entry when it
// exists and appending it to the container otherwise. The container is
// created when missing.
func Set(f Format, data []byte, container []string, name string, value any) ([]byte, error) {
	var out []byte
	var err error
	switch f {
	case TOML:
		out, err = tomlSet(data, container, name, value)
	default:
		out, err = jsonSet(data, container, name, value)
	}
	return checked(f, out, err)
}

// checked refuses an edit whose result would not parse: a safety net, so
// no edit can leave a broken file behind.
func checked(f Format, out []byte, err error) ([]byte, error) {
	if err != nil {
		return nil, err
	}
	var perr error
	if f == TOML {
		_, perr = tomlDecode(out)
	} else {
		_, perr = jsonParse(out)
	}
	if perr != nil {
		return nil, fmt.Errorf("cfgedit: the edit would not parse (%v)", perr)
	}
	return out, nil
}

// Remove deletes entry name from container; an absent entry leaves data
// unchanged.
func Remove(f Format, data []byte, container []string, name string) ([]byte, error) {
	var out []byte
	var err error
	switch f {
	case TOML:
		out, err = tomlRemove(data, container, name)
	default:
		out, err = jsonRemove(data, container, name)
	}
	return checked(f, out, err)
}

// Names lists the entry names of container, in file order.
func Names(f Format, data []byte, container []string) ([]string, error) {
	switch f {
	case TOML:
		return tomlNames(data, container)
	default:
		return jsonNames(data, container)
	}
}

// Empty reports whether data holds nothing but an empty container (or
// nothing at all): what is left of a file agentpack created once its last
// entry is removed.
func Empty(f Format, data []byte, container []string) bool {
	if len(bytes.TrimSpace(data)) == 0 {
		return true
	}
	var doc map[string]any
	var err error
	if f == TOML {
		doc, err = tomlDecode(data)
	} else {
		doc, err = jsonDecode(data)
	}
	if err != nil {
		return false
	}
	for len(container) > 0 {
		if len(doc) != 1 {
			return len(doc) == 0
		}
		sub, ok := doc[container[0]].(map[string]any)
		if !ok {
			return false
		}
		doc, container = sub, container[1:]
	}
	return len(doc) == 0
}

// Canonical is the canonical JSON of a value: sorted keys, no spaces.
func Canonical(value any) ([]byte, error) {
	b, err := json.Marshal(value)
	if err != nil {
		return nil, err
	}
	var v any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// Pretty renders canonical JSON indented, for diffs.
func Pretty(canonical []byte) []byte {
	if canonical == nil {
		return nil
	}
	var buf bytes.Buffer
	if json.Indent(&buf, canonical, "", "  ") != nil {
		return canonical
	}
	buf.WriteByte('\n')
	return buf.Bytes()
}

// lineOf is the 1-based line of offset in data.
func lineOf(data []byte, offset int) int {
	if offset > len(data) {
		offset = len(data)
	}
	return bytes.Count(data[:offset], []byte("\n")) + 1
}

// eolOf is the line ending new text gets: CRLF when data already uses it,
// so an edit does not mix line endings.
func eolOf(data []byte) string {
	if bytes.Contains(data, []byte("\r\n")) {
		return "\r\n"
	}
	return "\n"
}
