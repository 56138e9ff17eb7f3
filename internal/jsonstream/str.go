package jsonstream

import "unicode/utf8"

// AppendString appends s as a JSON string, escaped byte for byte as
// encoding/json's encoder escapes it with SetEscapeHTML(escapeHTML):
// control characters, '"' and '\', U+2028 and U+2029, each invalid UTF-8
// byte as U+FFFD, and with escapeHTML '<', '>' and '&'. It is for the
// Appenders that write an element's JSON themselves.
func AppendString[T string | []byte](dst []byte, s T, escapeHTML bool) []byte {
	return append(AppendStringContent(append(dst, '"'), s, escapeHTML), '"')
}

// AppendStringContent is AppendString without the quotes, for a string
// written in parts.
func AppendStringContent[T string | []byte](dst []byte, s T, escapeHTML bool) []byte {
	const hex = "0123456789abcdef"
	plain := &plainBytes[0]
	if escapeHTML {
		plain = &plainBytes[1]
	}
	start := 0
	for i := 0; i < len(s); {
		if plain[s[i]] {
			i++
			continue
		}
		if b := s[i]; b < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(string(s[i:min(len(s), i+utf8.UTFMax)]))
		switch {
		case c == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case c == '\u2028' || c == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[c&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(dst, s[start:]...)
}

// plainBytes are the bytes written as they are, without and with HTML
// escaping: printable ASCII but '"' and '\\' (and '<', '>', '&'). A table
// is faster than the comparisons for the long paths of a record.
var plainBytes = func() (t [2][256]bool) {
	for b := ' '; b < utf8.RuneSelf; b++ {
		t[0][b] = b != '"' && b != '\\'
		t[1][b] = t[0][b] && b != '<' && b != '>' && b != '&'
	}
	return t
}()
