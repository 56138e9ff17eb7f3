package manifest

import (
	"bytes"
	"io/fs"
	"strings"

	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/agentpack/agentpack/internal/yamlerr"
	"go.yaml.in/yaml/v3"
)

// Reader is the part of the engine's System that reading agentpack.yaml
// needs ([Load], [OpenDoc]).
type Reader interface {
	ReadFile(path fsys.AbsPath) ([]byte, error)
}

// Writer is the part of the engine's System that saving a [Doc] needs.
type Writer interface {
	WriteFile(path fsys.AbsPath, data []byte, perm fs.FileMode) error
}

// Doc is agentpack.yaml as text plus its YAML node tree. Edits are
// made to the text at the lines the nodes point to, so everything else —
// comments, blank lines, quoting, flow style — stays byte for byte.
type Doc struct {
	path fsys.AbsPath
	// known are the target names the engine has adapters for: an edit is
	// re-validated against them.
	known []string
	doc   yaml.Node
	lines []string // the file split after each '\n'
}

// OpenDoc reads the manifest at path with r for editing. known are the
// target names the engine has adapters for: every edit is re-validated
// against them.
func OpenDoc(r Reader, path fsys.AbsPath, known []string) (*Doc, error) {
	data, err := r.ReadFile(path)
	if err != nil {
		return nil, apperr.Wrap(err, apperr.ConfigMissing, "cannot read %s", path).WithHint("run `agentpack init` first")
	}
	md := &Doc{path: path, known: known, lines: strings.SplitAfter(string(data), "\n")}
	if md.lines[len(md.lines)-1] == "" {
		md.lines = md.lines[:len(md.lines)-1]
	}
	if err := yaml.Unmarshal(data, &md.doc); err != nil {
		return nil, apperr.Wrap(err, apperr.ConfigInvalid, "YAML syntax error: %s", yamlerr.Message(err)).WithHint("fix agentpack.yaml first")
	}
	if len(md.doc.Content) != 1 || md.doc.Content[0].Kind != yaml.MappingNode {
		return nil, apperr.New(apperr.ConfigInvalid, "agentpack.yaml must be a mapping").WithHint("fix agentpack.yaml first")
	}
	return md, nil
}

// Root is the document's top-level mapping, for tree edits that [Doc.Save]
// re-renders.
func (md *Doc) Root() *yaml.Node { return md.doc.Content[0] }

// List returns the sequence under key in [Doc.Root], creating it when
// absent.
func (md *Doc) List(key string) *yaml.Node {
	root := md.Root()
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == key {
			v := root.Content[i+1]
			if v.Kind != yaml.SequenceNode {
				v.Kind, v.Tag, v.Value, v.Content, v.Style = yaml.SequenceNode, "!!seq", "", nil, 0
			}
			return v
		}
	}
	seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	root.Content = append(root.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, seq)
	return seq
}

// encode re-renders the whole node tree; used only when a text edit is not
// possible (a flow-style or missing list).
func (md *Doc) encode() ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&md.doc); err != nil {
		return nil, apperr.Wrap(err, apperr.Unexpected, "cannot encode agentpack.yaml")
	}
	_ = enc.Close()
	return buf.Bytes(), nil
}

// Save re-renders the node tree after tree edits, then writes it through w.
func (md *Doc) Save(w Writer) error {
	data, err := md.encode()
	if err != nil {
		return err
	}
	return md.SaveBytes(w, data)
}

// SaveBytes re-validates data, an edit of the document, and writes it
// through w (atomically, with the engine's System).
func (md *Doc) SaveBytes(w Writer, data []byte) error {
	if _, err := Parse(data, md.known); err != nil {
		return err
	}
	return w.WriteFile(md.path, data, 0o644)
}

// value returns the node under key in the root mapping, or nil.
func (md *Doc) value(key string) *yaml.Node {
	root := md.Root()
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == key {
			return root.Content[i+1]
		}
	}
	return nil
}

// key returns the key node of key in the root mapping, or nil.
func (md *Doc) key(key string) *yaml.Node {
	root := md.Root()
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == key {
			return root.Content[i]
		}
	}
	return nil
}

// ItemField returns the scalar value of key in the list item n (a
// mapping), or "" when n has no such key.
func ItemField(n *yaml.Node, key string) string {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1].Value
		}
	}
	return ""
}

// eol is the file's line ending: that of its first line, "\n" by default.
func (md *Doc) eol() string {
	for _, l := range md.lines {
		if strings.HasSuffix(l, "\r\n") {
			return "\r\n"
		}
		if strings.HasSuffix(l, "\n") {
			return "\n"
		}
	}
	return "\n"
}

// withEOL converts the "\n" line breaks of re-rendered YAML to the file's.
func (md *Doc) withEOL(data []byte) []byte {
	if md.eol() == "\n" {
		return data
	}
	return bytes.ReplaceAll(data, []byte("\n"), []byte(md.eol()))
}

// splitEOL splits a line into its text and its line ending.
func splitEOL(line string) (text, eol string) {
	if strings.HasSuffix(line, "\r\n") {
		return line[:len(line)-2], "\r\n"
	}
	if strings.HasSuffix(line, "\n") {
		return line[:len(line)-1], "\n"
	}
	return line, ""
}

// isDocMarker reports whether line is a YAML document marker ("---" or
// "..."), which ends the document agentpack reads.
func isDocMarker(line string) bool {
	text, _ := splitEOL(line)
	if !strings.HasPrefix(text, "---") && !strings.HasPrefix(text, "...") {
		return false
	}
	return len(text) == 3 || text[3] == ' ' || text[3] == '\t'
}

// colOffset converts a 1-based YAML column of line lineNo (1-based), which
// counts characters, to a byte offset in the line text.
func (md *Doc) colOffset(lineNo, col int) (int, bool) {
	if lineNo < 1 || lineNo > len(md.lines) {
		return 0, false
	}
	text := md.lines[lineNo-1]
	skip := 0
	if lineNo == 1 && strings.HasPrefix(text, "\uFEFF") {
		skip = len("\uFEFF") // the parser drops a byte-order mark
	}
	return byteOffset(text[skip:], col, skip)
}

// byteOffset converts the 1-based character column col of text to a byte
// offset, plus base.
func byteOffset(text string, col, base int) (int, bool) {
	if col < 1 {
		return 0, false
	}
	n := 0
	for i := range text {
		if n == col-1 {
			return base + i, true
		}
		n++
	}
	if n == col-1 {
		return base + len(text), true
	}
	return 0, false
}

// scalarEnd returns the byte offset just after the scalar token of n that
// starts at byte start of line, when the whole token is on that line.
func scalarEnd(line string, start int, n *yaml.Node) (int, bool) {
	if n.Kind != yaml.ScalarNode || start < 0 || start >= len(line) {
		return 0, false
	}
	switch {
	case n.Style&yaml.SingleQuotedStyle != 0:
		if line[start] != '\'' {
			return 0, false
		}
		for i := start + 1; i < len(line); i++ {
			if line[i] != '\'' {
				continue
			}
			if i+1 < len(line) && line[i+1] == '\'' {
				i++ // '' is an escaped quote
				continue
			}
			return i + 1, true
		}
	case n.Style&yaml.DoubleQuotedStyle != 0:
		if line[start] != '"' {
			return 0, false
		}
		for i := start + 1; i < len(line); i++ {
			switch line[i] {
			case '\\':
				i++ // skip the escaped character
			case '"':
				return i + 1, true
			}
		}
	case n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) == 0:
		if n.Value != "" && strings.HasPrefix(line[start:], n.Value) {
			return start + len(n.Value), true
		}
	}
	return 0, false
}
