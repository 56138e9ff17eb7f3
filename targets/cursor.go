package targets

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"

	"github.com/agentpack/agentpack/engine/module"
	"github.com/agentpack/agentpack/engine/target"
	"github.com/agentpack/agentpack/internal/frontmatter"
	"github.com/agentpack/agentpack/internal/lazyregexp"
	"go.yaml.in/yaml/v3"
)

// Cursor is the adapter for the Cursor editor (project scope only).
type Cursor struct{}

var cursorSpec = &targetSpec{
	name:        "cursor",
	types:       []module.Type{module.TypeInstructions, module.TypeSkill, module.TypeCommand, module.TypeAgent, module.TypeMCP},
	projectOnly: true,
	outputs: []output{
		{kind: "rules", write: "write_rules", path: "rules_dir", def: ".cursor/rules"},
		{kind: "skills", write: "write_skills", path: "skills_dir", def: ".cursor/skills"},
		{kind: "commands", write: "write_commands", path: "commands_dir", def: ".cursor/commands"},
		{kind: "agents", write: "write_agents", path: "agents_dir", def: ".cursor/agents"},
		{kind: mcpKind, write: "write_mcp", path: "mcp_file", def: ".cursor/mcp.json", file: true},
		// The user file is written only by `mcp install --scope user`: a
		// deploy runs cursor in project scope.
		{kind: mcpKind, user: true, write: "write_user_mcp", path: "user_mcp_file", def: "~/.cursor/mcp.json", file: true},
	},
}

// Name implements target.Adapter.
func (Cursor) Name() string { return cursorSpec.name }

// Supports implements target.Adapter.
func (Cursor) Supports(t module.Type) bool { return cursorSpec.supports(t) }

// DefaultScope implements target.ScopeDefaulter: project is the only scope.
func (Cursor) DefaultScope() target.Scope { return target.ScopeProject }

// Validate implements target.Adapter.
func (Cursor) Validate(cfg target.Config) error { return cursorSpec.validate(cfg) }

// Render implements target.Adapter.
func (c Cursor) Render(rc *target.RenderContext, modules []*module.LoadedModule) (*target.Output, error) {
	return c.render(rc, modules, rc.Warn)
}

func (Cursor) render(rc *target.RenderContext, modules []*module.LoadedModule, warn warnFunc) (*target.Output, error) {
	r := newRenderer(cursorSpec, rc, rc.ProjectRoot, warn)
	r.reserve(modules)
	for _, lm := range modules {
		switch lm.Type {
		case module.TypeInstructions:
			if dir, ok := r.path("rules", false); ok {
				r.add(under(dir, CursorRuleKey(lm.ID)+".mdc"), r.cursorRule(lm), 0o644, lm.ID)
			}
		case module.TypeSkill:
			if dir, ok := r.path("skills", false); ok {
				r.copyModule(under(dir, lm.Name()), lm)
			}
		case module.TypeCommand:
			if dir, ok := r.path("commands", false); ok {
				r.copyFile(under(dir, mainFile(lm)), lm.Main, lm.ID)
			}
		case module.TypeAgent:
			if dir, ok := r.path("agents", false); ok {
				r.add(under(dir, lm.Name()+".md"), r.markdownAgent(lm, agentKeys), 0o644, lm.ID)
			}
		}
	}
	if err := r.mcpServers(modules, cursorMCP); err != nil {
		return nil, err
	}
	return r.output(), nil
}

var unsafeKeyChar = lazyregexp.New(`[^A-Za-z0-9_-]`)

// CursorRuleKey is the file name (without .mdc) of a module's Cursor rule:
// the id with every character outside [A-Za-z0-9_-] replaced by '_', cut at
// 64 bytes, then "--" and the first 10 hex digits of sha256(id). It matches
// the original agentpack, so rules it wrote are recognised.
func CursorRuleKey(id string) string {
	key := unsafeKeyChar.ReplaceAllString(id, "_")
	if key == "" {
		key = "module"
	}
	if len(key) > 64 {
		key = key[:64]
	}
	sum := sha256.Sum256([]byte(id))
	return key + "--" + hex.EncodeToString(sum[:])[:10]
}

// cursorRule renders an instructions module as a Cursor rule: frontmatter
// description, globs and alwaysApply, a blank line, then the body.
func (r *renderer) cursorRule(lm *module.LoadedModule) []byte {
	r.dropKeys(lm, "rules", []string{"description", "globs", "alwaysApply"}, instructionMeta)
	fm := lm.Frontmatter
	desc := fm.Node("description")
	if fm.String("description") == "" {
		desc = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "agentpack: " + lm.ID, Style: yaml.DoubleQuotedStyle}
	}
	globs := fm.Node("globs")
	if !hasValue(fm, "globs") {
		globs = &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle}
	}
	always := fm.Node("alwaysApply")
	if !hasValue(fm, "alwaysApply") {
		always = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "true"}
	}
	out := frontmatter.New()
	out.Set("description", desc)
	out.Set("globs", globs)
	out.Set("alwaysApply", always)
	body := instructionBody(lm)
	data := out.Render(append([]byte("\n"), body...))
	if !bytes.HasSuffix(data, []byte("\n")) {
		data = append(data, '\n')
	}
	return data
}
