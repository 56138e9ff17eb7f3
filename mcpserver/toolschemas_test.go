package mcpserver

import (
	"encoding/json"
	"testing"
)

// TestStringArgumentsHaveMaxLength: every free-text string argument of
// every tool advertises (and so is validated against) maxLength
// maxStringArg; enum strings need none.
func TestStringArgumentsHaveMaxLength(t *testing.T) {
	for _, tl := range allTools() {
		var s struct {
			Properties map[string]struct {
				Type      string   `json:"type"`
				Enum      []string `json:"enum"`
				MaxLength *int     `json:"maxLength"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(tl.schema, &s); err != nil {
			t.Fatalf("%s: %v", tl.name, err)
		}
		for name, p := range s.Properties {
			if p.Type != "string" || p.Enum != nil {
				continue
			}
			if p.MaxLength == nil || *p.MaxLength != maxStringArg {
				t.Errorf("%s.%s: want maxLength %d, got %v", tl.name, name, maxStringArg, p.MaxLength)
			}
		}
	}
}
