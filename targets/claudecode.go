package targets

import (
	"github.com/agentpack/agentpack/engine/module"
	"github.com/agentpack/agentpack/engine/target"
)

// ClaudeCode is the adapter for Anthropic's Claude Code.
type ClaudeCode struct{}

var claudeCodeSpec = &targetSpec{
	name:       "claude_code",
	types:      []module.Type{module.TypeInstructions, module.TypeSkill, module.TypeCommand, module.TypeAgent, module.TypeMCP},
	homeOption: "claude_home",
	outputs: []output{
		{kind: "instructions", user: true, write: "write_user_instructions", path: "user_instructions_file", def: "CLAUDE.md", file: true},
		{kind: "instructions", write: "write_repo_instructions", path: "repo_instructions_file", def: "CLAUDE.md", file: true},
		{kind: "skills", user: true, write: "write_user_skills", path: "user_skills_dir", def: "skills"},
		{kind: "skills", write: "write_repo_skills", path: "repo_skills_dir", def: ".claude/skills"},
		{kind: "commands", user: true, write: "write_user_commands", path: "user_commands_dir", def: "commands"},
		{kind: "commands", write: "write_repo_commands", path: "repo_commands_dir", def: ".claude/commands"},
		{kind: "agents", user: true, write: "write_user_agents", path: "user_agents_dir", def: "agents"},
		{kind: "agents", write: "write_repo_agents", path: "repo_agents_dir", def: ".claude/agents"},
		{kind: mcpKind, user: true, write: "write_user_mcp", path: "user_mcp_file", def: "~/.claude.json", file: true},
		{kind: mcpKind, write: "write_repo_mcp", path: "repo_mcp_file", def: ".mcp.json", file: true},
	},
}

// Name implements target.Adapter.
func (ClaudeCode) Name() string { return claudeCodeSpec.name }

// Supports implements target.Adapter.
func (ClaudeCode) Supports(t module.Type) bool { return claudeCodeSpec.supports(t) }

// Validate implements target.Adapter.
func (ClaudeCode) Validate(cfg target.Config) error { return claudeCodeSpec.validate(cfg) }

// Render implements target.Adapter.
func (c ClaudeCode) Render(rc *target.RenderContext, modules []*module.LoadedModule) (*target.Output, error) {
	return c.render(rc, modules, rc.Warn)
}

func (ClaudeCode) render(rc *target.RenderContext, modules []*module.LoadedModule, warn warnFunc) (*target.Output, error) {
	r := newRenderer(claudeCodeSpec, rc, claudeHome(rc), warn)
	r.reserve(modules)
	var instructions []*module.LoadedModule
	for _, lm := range modules {
		switch lm.Type {
		case module.TypeInstructions:
			instructions = append(instructions, lm)
		case module.TypeSkill:
			for _, dir := range r.all("skills") {
				r.copyModule(under(dir, lm.Name()), lm)
			}
		case module.TypeCommand:
			for _, dir := range r.all("commands") {
				r.copyFile(under(dir, mainFile(lm)), lm.Main, lm.ID)
			}
		case module.TypeAgent:
			for _, dir := range r.all("agents") {
				r.add(under(dir, lm.Name()+".md"), r.markdownAgent(lm, agentKeys), 0o644, lm.ID)
			}
		}
	}
	if err := r.mcpServers(modules, claudeMCP); err != nil {
		return nil, err
	}
	for _, p := range r.all("instructions") {
		if err := r.instructionsFile(p, instructions); err != nil {
			return nil, err
		}
	}
	return r.output(), nil
}
