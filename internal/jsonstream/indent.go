package jsonstream

import "bytes"

// AppendIndent appends src, one JSON value as encoding/json marshals it
// (compact: no space outside strings), indented byte for byte as
// json.Indent(dst, src, prefix, indent) indents it. It is json.Indent
// without its scanner, which steps through every byte of every string:
// strings are copied whole here, so the indent of a change with a 1 KiB
// diff in it costs its punctuation, not its bytes. src must be valid
// compact JSON; anything after the value (Encode's newline) is copied.
func AppendIndent(dst, src []byte, prefix, indent string) []byte {
	depth, open := 0, false // open: a '{' or '[' was just written
	newline := func(depth int) {
		dst = append(dst, '\n')
		dst = append(dst, prefix...)
		for range depth {
			dst = append(dst, indent...)
		}
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		if open && c != '}' && c != ']' {
			open = false
			depth++
			newline(depth)
		}
		switch c {
		case '"':
			end := stringEnd(src, i)
			dst = append(dst, src[i:end]...)
			i = end - 1
		case '{', '[':
			open = true
			dst = append(dst, c)
		case ',':
			dst = append(dst, c)
			newline(depth)
		case ':':
			dst = append(dst, c, ' ')
		case '}', ']':
			if open {
				open = false // {} and [] stay as they are
			} else {
				depth--
				newline(depth)
			}
			dst = append(dst, c)
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// stringEnd is the index just past the JSON string that starts at
// src[start] (a '"'): the first '"' after it that an odd run of
// backslashes does not escape.
func stringEnd(src []byte, start int) int {
	i := start + 1
	for {
		j := bytes.IndexByte(src[i:], '"')
		if j < 0 {
			return len(src)
		}
		i += j
		k := i
		for k > start+1 && src[k-1] == '\\' {
			k--
		}
		i++
		if (i-1-k)%2 == 0 {
			return i
		}
	}
}
