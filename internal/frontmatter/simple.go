package frontmatter

import (
	"bytes"

	"go.yaml.in/yaml/v3"
)

// pair is one `key: value` line of a simple block, with where its value
// starts (line and column, as yaml.v3 counts them).
type pair struct {
	key, value   string
	line, column int32
}

// parseSimple reads, without the YAML parser, a block of only `key: value`
// lines whose keys and values YAML reads as plain strings (most SKILL.md
// frontmatter: name and description), as the pairs in file order; their
// [mapping] is the node yaml.v3 gives. ok is false for anything else
// (quotes, comments, lists, numbers, blank lines, …), which the YAML
// parser then reads.
func parseSimple(src []byte) (pairs []pair, ok bool) {
	if len(src) == 0 || src[len(src)-1] != '\n' {
		return nil, false
	}
	pairs = make([]pair, 0, bytes.Count(src, []byte{'\n'}))
	for line := int32(1); len(src) > 0; line++ {
		i := bytes.IndexByte(src, '\n')
		text := src[:i]
		src = src[i+1:]
		colon := bytes.IndexByte(text, ':')
		if colon <= 0 || !plainKey(text[:colon]) {
			return nil, false
		}
		start := colon + 1
		for start < len(text) && text[start] == ' ' {
			start++
		}
		if start == colon+1 || !plainString(text[start:]) {
			return nil, false
		}
		key := string(text[:colon])
		for _, p := range pairs {
			if p.key == key {
				return nil, false // a repeated key: let the parser decide
			}
		}
		pairs = append(pairs, pair{key: key, value: string(text[start:]), line: line, column: int32(start + 1)})
	}
	return pairs, true
}

// mapping is the mapping node yaml.v3 gives for the block of pairs, made
// in one allocation for all its nodes.
func mapping(pairs []pair) *yaml.Node {
	nodes := make([]yaml.Node, 2*len(pairs)+1)
	m := &nodes[0]
	*m = yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: 1, Column: 1, Content: make([]*yaml.Node, 0, 2*len(pairs))}
	for i, p := range pairs {
		k, v := &nodes[2*i+1], &nodes[2*i+2]
		*k = yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: p.key, Line: int(p.line), Column: 1}
		*v = p.valueNode()
		m.Content = append(m.Content, k, v)
	}
	return m
}

// valueNode is the scalar node yaml.v3 gives for p's value.
func (p pair) valueNode() yaml.Node {
	return yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: p.value, Line: int(p.line), Column: int(p.column)}
}

// plainKey reports whether b is a key made of a letter then letters,
// digits, '_' and '-', that YAML reads as a string.
func plainKey(b []byte) bool {
	if !isLetter(b[0]) || notString(b) {
		return false
	}
	for _, c := range b[1:] {
		if !isLetter(c) && !(c >= '0' && c <= '9') && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

// plainString reports whether b, a value after "key: ", is a plain
// scalar YAML reads as this exact string: it starts with a letter (so it
// is no number, date, indicator or quote), holds only printable ASCII,
// ends without a space or ':', has no ": " (a nested mapping) or " #" (a
// comment), and is none of the words YAML reads as a bool or null.
func plainString(b []byte) bool {
	if len(b) == 0 || !isLetter(b[0]) || b[len(b)-1] == ' ' || b[len(b)-1] == ':' || notString(b) {
		return false
	}
	for i, c := range b {
		if c < 0x20 || c > 0x7e {
			return false
		}
		if i > 0 && ((c == ' ' && b[i-1] == ':') || (c == '#' && b[i-1] == ' ')) {
			return false
		}
	}
	return true
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// notString reports whether b is one of the plain words starting with a
// letter that yaml.v3 resolves to something other than a string.
func notString(b []byte) bool {
	switch string(b) {
	case "true", "True", "TRUE", "false", "False", "FALSE", "null", "Null", "NULL":
		return true
	}
	return false
}
