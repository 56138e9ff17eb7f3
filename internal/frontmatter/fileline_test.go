package frontmatter

import (
	"strings"
	"testing"
)

// TestParseErrorFileLine: a YAML error in the frontmatter names the line of
// the file (the frontmatter starts on line 2), not of the YAML block.
func TestParseErrorFileLine(t *testing.T) {
	for data, want := range map[string]string{
		"---\nname: s\n  bad: indent\n---\nbody\n":           "line 3:",
		"---\nname: s\ndescription: a: b\n---\nbody\n":       "line 3:",
		"---\nname: s\n\n\ndescription: \"open\n---\nbody\n": "line 5:",
	} {
		_, _, err := Parse([]byte(data))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: want an error at %s, got %v", data, want, err)
		}
	}
}
