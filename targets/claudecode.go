package targets

import (
	"path/filepath"

	"github.com/agentpack/agentpack/engine"
)

// ClaudeCode is the adapter for Anthropic's Claude Code.
type ClaudeCode struct{}

var claudeCodeSpec = &targetSpec{
	name:       "claude_code",
	types:      []engine.ModuleType{engine.TypeInstructions, engine.TypeSkill, engine.TypeCommand, engine.TypeAgent},
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
	},
}

// Name implements engine.Target.
func (ClaudeCode) Name() string { return claudeCodeSpec.name }

// Supports implements engine.Target.
func (ClaudeCode) Supports(t engine.ModuleType) bool { return claudeCodeSpec.supports(t) }

// Validate implements engine.Target.
func (ClaudeCode) Validate(cfg engine.TargetConfig) error { return claudeCodeSpec.validate(cfg) }

// Render implements engine.Target.
func (c ClaudeCode) Render(rc *engine.RenderContext, modules []*engine.LoadedModule) (*engine.TargetOutput, error) {
	return c.render(rc, modules, rc.Warn)
}

func (ClaudeCode) render(rc *engine.RenderContext, modules []*engine.LoadedModule, warn warnFunc) (*engine.TargetOutput, error) {
	r := newRenderer(claudeCodeSpec, rc, claudeHome(rc), warn)
	var instructions []*engine.LoadedModule
	for _, lm := range modules {
		switch lm.Type {
		case engine.TypeInstructions:
			instructions = append(instructions, lm)
		case engine.TypeSkill:
			for _, dir := range r.all("skills") {
				r.copyModule(filepath.Join(dir, lm.Name()), lm)
			}
		case engine.TypeCommand:
			for _, dir := range r.all("commands") {
				r.add(filepath.Join(dir, mainFile(lm)), lm.Main.Data, lm.Main.Mode, lm.ID)
			}
		case engine.TypeAgent:
			for _, dir := range r.all("agents") {
				r.add(filepath.Join(dir, lm.Name()+".md"), r.markdownAgent(lm, agentKeys), 0o644, lm.ID)
			}
		}
	}
	for _, p := range r.all("instructions") {
		if err := r.instructionsFile(p, instructions); err != nil {
			return nil, err
		}
	}
	return r.output(), nil
}
