package frontmatter

import (
	"bytes"

	"go.yaml.in/yaml/v3"
)

// parseSimple builds, without the YAML parser, the mapping node yaml.v3
// gives for src when src is only `key: value` lines whose keys and values
// YAML reads as plain strings (most SKILL.md frontmatter: name and
// description). ok is false for anything else (quotes, comments, lists,
// numbers, blank lines, …), which the YAML parser then reads.
func parseSimple(src []byte) (node *yaml.Node, ok bool) {
	if len(src) == 0 || src[len(src)-1] != '\n' {
		return nil, false
	}
	n := bytes.Count(src, []byte{'\n'})
	nodes := make([]yaml.Node, 2*n+1) // one allocation for the whole block
	m := &nodes[0]
	*m = yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: 1, Column: 1, Content: make([]*yaml.Node, 0, 2*n)}
	for line := 1; len(src) > 0; line++ {
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
		key, value := string(text[:colon]), string(text[start:])
		for j := 0; j < len(m.Content); j += 2 {
			if m.Content[j].Value == key {
				return nil, false // a repeated key: let the parser decide
			}
		}
		k, v := &nodes[2*line-1], &nodes[2*line]
		*k = yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key, Line: line, Column: 1}
		*v = yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: value, Line: line, Column: start + 1}
		m.Content = append(m.Content, k, v)
	}
	return m, true
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
