// Package frontmatter parses and renders the YAML frontmatter of Markdown
// assets (SKILL.md, commands, agents), keeping key order.
package frontmatter

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"

	"github.com/agentpack/agentpack/internal/lazyregexp"
	"github.com/agentpack/agentpack/internal/yamlerr"
	"go.yaml.in/yaml/v3"
)

// Block is the YAML header of a Markdown file, order kept.
type Block struct {
	// simple holds a block of plain `key: value` lines (nearly every
	// SKILL.md's), made into nodes only for a caller that needs them: a
	// mapping node of yaml.v3 takes about 800 bytes for two keys, which
	// at 10,000 skills was a fifth of what a loaded repo held. node is
	// nil while simple is used.
	simple []pair
	node   *yaml.Node // mapping node
}

// mapping is f's mapping node, made from its pairs when it is simple (a
// new node each time: a caller that changes it changes only its copy).
func (f *Block) mapping() *yaml.Node {
	if f.node == nil {
		return mapping(f.simple)
	}
	return f.node
}

// Parse splits "---\n<yaml>\n---\n<body>". A file without a
// header has nil frontmatter and the whole input as body.
func Parse(data []byte) (*Block, []byte, error) {
	rest, ok := cutPrefixLine(data, "---")
	if !ok {
		return nil, data, nil
	}
	end := -1
	for i := 0; i < len(rest); {
		j := bytes.IndexByte(rest[i:], '\n')
		line := rest[i:]
		next := len(rest)
		if j >= 0 {
			line = rest[i : i+j]
			next = i + j + 1
		}
		if string(bytes.TrimRight(line, " \t\r")) == "---" {
			end = i
			rest, data = rest[:end], rest[next:]
			break
		}
		i = next
	}
	if end < 0 {
		return nil, nil, fmt.Errorf("frontmatter starts with --- but never ends")
	}
	if pairs, ok := parseSimple(rest); ok {
		return &Block{simple: pairs}, data, nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(rest, &doc); err != nil {
		return nil, nil, fmt.Errorf("frontmatter YAML: %s", fileLines(yamlerr.Message(err)))
	}
	fm := &Block{node: &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}}
	if len(doc.Content) == 1 {
		if doc.Content[0].Kind != yaml.MappingNode {
			return nil, nil, fmt.Errorf("frontmatter must be a YAML mapping")
		}
		fm.node = doc.Content[0]
	}
	return fm, data, nil
}

var yamlLine = lazyregexp.New(`\bline (\d+):`)

// fileLines turns the line numbers in msg, counted in the YAML between the
// --- lines, into lines of the file, where that YAML starts on line 2.
func fileLines(msg string) string {
	return yamlLine.ReplaceAllStringFunc(msg, func(s string) string {
		n, _ := strconv.Atoi(yamlLine.FindStringSubmatch(s)[1])
		return fmt.Sprintf("line %d:", n+1)
	})
}

func cutPrefixLine(data []byte, want string) ([]byte, bool) {
	i := bytes.IndexByte(data, '\n')
	if i < 0 {
		return nil, false
	}
	if string(bytes.TrimRight(data[:i], " \t\r")) != want {
		return nil, false
	}
	return data[i+1:], true
}

// Keys returns the top-level keys in file order.
func (f *Block) Keys() []string {
	if f == nil {
		return nil
	}
	var out []string
	if f.node == nil {
		for _, p := range f.simple {
			out = append(out, p.key)
		}
		return out
	}
	for i := 0; i+1 < len(f.node.Content); i += 2 {
		out = append(out, f.node.Content[i].Value)
	}
	return out
}

// Node returns the value node of key, or nil.
func (f *Block) Node(key string) *yaml.Node {
	if f == nil {
		return nil
	}
	if f.node == nil {
		if p, ok := f.pair(key); ok {
			n := p.valueNode()
			return &n
		}
		return nil
	}
	for i := 0; i+1 < len(f.node.Content); i += 2 {
		if f.node.Content[i].Value == key {
			return f.node.Content[i+1]
		}
	}
	return nil
}

// pair is the pair of key in a simple block.
func (f *Block) pair(key string) (pair, bool) {
	for _, p := range f.simple {
		if p.key == key {
			return p, true
		}
	}
	return pair{}, false
}

// String returns a scalar value, or "".
func (f *Block) String(key string) string {
	if f != nil && f.node == nil {
		p, _ := f.pair(key)
		return p.value
	}
	n := f.Node(key)
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return ""
	}
	return n.Value
}

// Value decodes key into a plain Go value (nil when absent).
func (f *Block) Value(key string) any {
	n := f.Node(key)
	if n == nil {
		return nil
	}
	var v any
	_ = n.Decode(&v)
	return v
}

// Has reports whether key is present.
func (f *Block) Has(key string) bool { return f.Node(key) != nil }

// Subset returns a frontmatter with only keys, in this file's order.
func (f *Block) Subset(keys ...string) *Block {
	out := &Block{node: &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}}
	if f == nil {
		return out
	}
	m := f.mapping()
	for i := 0; i+1 < len(m.Content); i += 2 {
		if slices.Contains(keys, m.Content[i].Value) {
			out.node.Content = append(out.node.Content, m.Content[i], m.Content[i+1])
		}
	}
	return out
}

// Set sets key to a Go value, appending it when absent.
func (f *Block) Set(key string, value any) {
	var v yaml.Node
	_ = v.Encode(value)
	f.node, f.simple = f.mapping(), nil
	for i := 0; i+1 < len(f.node.Content); i += 2 {
		if f.node.Content[i].Value == key {
			f.node.Content[i+1] = &v
			return
		}
	}
	f.node.Content = append(f.node.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, &v)
}

// New returns an empty frontmatter.
func New() *Block {
	return &Block{node: &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}}
}

// mappingOrNil is [Block.mapping] of a Block that may be nil.
func (f *Block) mappingOrNil() *yaml.Node {
	if f == nil {
		return nil
	}
	return f.mapping()
}

// Render writes "---\n<yaml>---\n" followed by body.
func (f *Block) Render(body []byte) []byte {
	var buf bytes.Buffer
	buf.WriteString("---\n")
	if m := f.mappingOrNil(); m != nil && len(m.Content) > 0 {
		enc := yaml.NewEncoder(&buf)
		enc.SetIndent(2)
		_ = enc.Encode(m)
		_ = enc.Close()
	}
	buf.WriteString("---\n")
	buf.Write(body)
	return buf.Bytes()
}
