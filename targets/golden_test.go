package targets

import (
	"testing"

	"github.com/agentpack/agentpack/engine"
)

func TestGolden(t *testing.T) {
	cases := []struct {
		target string
		scope  engine.Scope
	}{
		{"codex", engine.ScopeUser},
		{"codex", engine.ScopeProject},
		{"codex", engine.ScopeBoth},
		{"claude_code", engine.ScopeUser},
		{"claude_code", engine.ScopeProject},
		{"claude_code", engine.ScopeBoth},
		{"cursor", engine.ScopeProject},
		{"vscode", engine.ScopeProject},
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
