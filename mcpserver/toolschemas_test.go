package mcpserver

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentpack/agentpack/internal/apperr"
)

// TestStringArgumentsHaveMaxLength: every free-text string argument of
// every tool is validated against maxLength maxStringArg (a longer value is
// E_INVALID_ARGUMENT naming it, one of exactly maxStringArg passes
// validation), though tools/list leaves the keyword out; enum strings need
// none.
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
		compiled, err := compileSchema(tl.name, tl.schema)
		if err != nil {
			t.Fatal(err)
		}
		tl.compiled = compiled
		for name, p := range s.Properties {
			if p.MaxLength != nil {
				t.Errorf("%s.%s: maxLength is advertised; the server adds it", tl.name, name)
			}
			if p.Type != "string" || p.Enum != nil {
				continue
			}
			for _, n := range []int{maxStringArg, maxStringArg + 1} {
				raw, _ := json.Marshal(map[string]any{name: strings.Repeat("x", n)})
				_, err := tl.checkArgs(raw)
				tooLong := false
				if err != nil && apperr.CodeOf(err) == apperr.InvalidArgument {
					e := apperr.As(err)
					probs, _ := e.Details["problems"].([]string)
					for _, p := range probs {
						tooLong = tooLong || strings.HasPrefix(p, "/"+name+":")
					}
				}
				if tooLong != (n > maxStringArg) {
					t.Errorf("%s.%s with %d characters: %v", tl.name, name, n, err)
				}
			}
		}
	}
}
