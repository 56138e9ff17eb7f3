// Package yamlerr turns the YAML library's errors into short messages with
// line numbers, for agentpack.yaml and for Markdown frontmatter alike.
package yamlerr

import (
	"fmt"
	"strings"
)

// Message is err's text without the library's "yaml: " and
// "unmarshal errors:" prefixes.
func Message(err error) string {
	s := err.Error()
	s = strings.TrimPrefix(s, "yaml: ")
	return strings.ReplaceAll(s, "unmarshal errors:\n  ", "")
}

// Line is the line number err names, or 0.
func Line(err error) int {
	var line int
	s := strings.TrimPrefix(err.Error(), "yaml: ")
	if _, e := fmt.Sscanf(s, "line %d:", &line); e == nil {
		return line
	}
	return 0
}
