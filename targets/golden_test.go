package targets

import (
	"testing"

	"github.com/agentpack/agentpack/engine/target"
)

func TestGolden(t *testing.T) {
	cases := []struct {
		target string
		scope  target.Scope
	}{
		{"codex", target.ScopeUser},
		{"codex", target.ScopeProject},
		{"codex", target.ScopeBoth},
		{"claude_code", target.ScopeUser},
		{"claude_code", target.ScopeProject},
		{"claude_code", target.ScopeBoth},
		{"cursor", target.ScopeProject},
		{"vscode", target.ScopeProject},
	}
	for _, c := range cases {
		name := c.target + "-" + string(c.scope)
		t.Run(name, func(t *testing.T) {
			e := newTestEnv(t)
			out, warnings := e.render(t, c.target, c.scope, nil)
			golden(t, name, e.listing(t, out, warnings))
		})
	}
}
