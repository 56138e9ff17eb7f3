package target

import (
	"strings"

	"github.com/agentpack/agentpack/internal/checksum"
)

// Marker lines that wrap each module's text in an aggregated instructions
// file (the same markers the original agentpack writes).
const (
	MarkerStartPrefix = "<!-- agentpack:module="
	MarkerStartSuffix = " -->"
	MarkerEnd         = "<!-- /agentpack -->"
)

// SplitMarked splits text around its agentpack blocks: prefix is
// everything before the line of the first start marker, owned everything
// from that line through the line of the last end marker, suffix the rest.
// ok is false when text has no complete block.
func SplitMarked(text string) (prefix, owned, suffix string, ok bool) {
	first, lastEnd := -1, -1
	for off := 0; off < len(text); {
		end := strings.IndexByte(text[off:], '\n')
		next := len(text)
		if end >= 0 {
			next = off + end + 1
		}
		line := strings.TrimSpace(text[off:next])
		switch {
		case first < 0 && strings.HasPrefix(line, MarkerStartPrefix) && strings.HasSuffix(line, "-->"):
			first = off
		case first >= 0 && line == MarkerEnd:
			lastEnd = next
		}
		off = next
	}
	if first < 0 || lastEnd < 0 {
		return "", "", "", false
	}
	return text[:first], text[first:lastEnd], text[lastEnd:], true
}

// OwnedSHA256 is the hash of the part of a marked file agentpack owns (its
// blocks, from the first start marker through the last end marker); the
// user's text around them does not count. A file without complete blocks
// is owned whole.
func OwnedSHA256(data []byte) string {
	if _, owned, _, ok := SplitMarked(string(data)); ok {
		return checksum.SHA256Hex([]byte(owned))
	}
	return checksum.SHA256Hex(data)
}

// Sections returns the text of each module's agentpack block in a marked
// file, by module id: the lines between its start and end markers. ok is
// false when text has no block, or a block is unclosed, nested or repeated.
func Sections(text string) (sections map[string]string, ok bool) {
	sections = map[string]string{}
	id, start := "", -1
	for off := 0; off < len(text); {
		end := strings.IndexByte(text[off:], '\n')
		next := len(text)
		if end >= 0 {
			next = off + end + 1
		}
		line := strings.TrimSpace(text[off:next])
		switch {
		case strings.HasPrefix(line, MarkerStartPrefix) && strings.HasSuffix(line, "-->"):
			name := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(line, MarkerStartPrefix), "-->"))
			if start >= 0 || name == "" {
				return nil, false
			}
			if _, dup := sections[name]; dup {
				return nil, false
			}
			id, start = name, next
		case line == MarkerEnd:
			if start < 0 {
				return nil, false
			}
			sections[id] = text[start:off]
			id, start = "", -1
		}
		off = next
	}
	return sections, start < 0 && len(sections) > 0
}
