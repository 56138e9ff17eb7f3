// Package targets holds the target adapters: codex, claude_code, cursor and
// vscode. Each maps modules to files for one AI tool and registers itself with
// the engine through [Register]; the engine never imports this package.
package targets

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/agentpack/agentpack/engine/module"
	"github.com/agentpack/agentpack/engine/target"
	"github.com/agentpack/agentpack/internal/apperr"
)

// output is one thing a target writes: a single file (instructions) or a
// folder it owns (skills, prompts, commands, agents, rules).
type output struct {
	kind string // instructions, skills, prompts, commands, agents, rules, scoped_instructions
	user bool   // user scope; false means project scope
	// write is the option that turns the output off; alias is a second
	// accepted name for the same switch (the original tool's, or the uniform
	// one), read when write is absent.
	write, alias string
	// path is the option that moves the output; def is its default, relative
	// to the tool home (user) or the project root (project).
	path, def string
	file      bool
}

// targetSpec is the static description of an adapter: its outputs and options.
type targetSpec struct {
	name        string
	types       []module.Type
	projectOnly bool
	// homeOption names the option holding the tool's user folder
	// (codex_home, claude_home); "" for project-only targets.
	homeOption string
	outputs    []output
}

func (s *targetSpec) supports(t module.Type) bool { return slices.Contains(s.types, t) }

// knownOptions lists every option key the target reads, sorted.
func (s *targetSpec) knownOptions() []string {
	var keys []string
	if s.homeOption != "" {
		keys = append(keys, s.homeOption)
	}
	for _, o := range s.outputs {
		keys = append(keys, o.write, o.path)
		if o.alias != "" {
			keys = append(keys, o.alias)
		}
	}
	sort.Strings(keys)
	return slices.Compact(keys)
}

// validate checks the scope and the types of the known options. Unknown
// option keys are not an error here: Render warns about them, so a manifest
// written for a newer agentpack still works.
func (s *targetSpec) validate(cfg target.Config) error {
	if s.projectOnly && cfg.Scope != "" && cfg.Scope != target.ScopeProject {
		return apperr.New(apperr.ConfigInvalid, "target %s supports only project scope, not scope: %s", s.name, cfg.Scope).
			WithHint("set targets.%s.scope to project (or remove it)", s.name).
			With("target", s.name).With("scope", string(cfg.Scope))
	}
	for _, key := range s.knownOptions() {
		v, ok := cfg.Options[key]
		if !ok || v == nil {
			continue
		}
		if strings.HasPrefix(key, "write_") {
			if !isBoolish(v) {
				return optionErr(s.name, key, "must be true or false, got %v", v)
			}
			continue
		}
		if str, ok := v.(string); !ok || strings.TrimSpace(str) == "" {
			return optionErr(s.name, key, "must be a non-empty path, got %v", v)
		}
	}
	return nil
}

func isBoolish(v any) bool {
	switch x := v.(type) {
	case bool:
		return true
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "true", "yes", "1", "false", "no", "0":
			return true
		}
	}
	return false
}

func optionErr(target, key, format string, args ...any) error {
	return apperr.New(apperr.ConfigInvalid, "targets.%s.options.%s %s", target, key, fmt.Sprintf(format, args...)).
		WithHint("see docs/targets.md for the options of %s", target).
		With("target", target).With("option", key)
}

// enabled reports whether output o is on for cfg (scope aside).
func (o output) enabled(cfg target.Config) bool {
	if _, ok := cfg.Options[o.write]; !ok && o.alias != "" {
		return cfg.OptionBool(o.alias, true)
	}
	return cfg.OptionBool(o.write, true)
}
