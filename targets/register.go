package targets

import "github.com/agentpack/agentpack/engine/target"

// Builtin returns the built-in target adapters, sorted by name.
func Builtin() []target.Adapter {
	return []target.Adapter{ClaudeCode{}, Codex{}, Cursor{}, VSCode{}}
}

// NewSet returns the built-in adapters as the set an engine is built with.
func NewSet() *target.Set { return target.NewSet(Builtin()...) }
