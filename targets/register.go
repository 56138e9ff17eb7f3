package targets

import (
	"sync"

	"github.com/agentpack/agentpack/engine"
)

var registerOnce sync.Once

// Builtin returns the built-in target adapters, sorted by name.
func Builtin() []engine.Target {
	return []engine.Target{ClaudeCode{}, Codex{}, Cursor{}, VSCode{}}
}

// Register registers the built-in adapters with the engine. It is safe to
// call more than once.
func Register() {
	registerOnce.Do(func() {
		for _, t := range Builtin() {
			engine.Register(t)
		}
	})
}
