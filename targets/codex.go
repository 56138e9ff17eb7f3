package targets

import (
	"bytes"
	"slices"

	"github.com/agentpack/agentpack/engine/module"
	"github.com/agentpack/agentpack/engine/target"
	"github.com/pelletier/go-toml/v2"
)

// Codex is the adapter for OpenAI Codex (CLI and IDE).
type Codex struct{}

var codexSpec = &targetSpec{
	name:       "codex",
	types:      []module.Type{module.TypeInstructions, module.TypeSkill, module.TypePrompt, module.TypeAgent, module.TypeMCP},
	homeOption: "codex_home",
	outputs: []output{
		{kind: "instructions", user: true, write: "write_agents_global", alias: "write_user_instructions", path: "user_instructions_file", def: "AGENTS.md", file: true},
		{kind: "instructions", write: "write_agents_repo_root", alias: "write_repo_instructions", path: "repo_instructions_file", def: "AGENTS.md", file: true},
		{kind: "skills", user: true, write: "write_user_skills", path: "user_skills_dir", def: "skills"},
		{kind: "skills", write: "write_repo_skills", path: "repo_skills_dir", def: ".agents/skills"},
		{kind: "prompts", user: true, write: "write_user_prompts", path: "user_prompts_dir", def: "prompts"},
		{kind: "agents", write: "write_repo_agents", path: "repo_agents_dir", def: ".codex/agents"},
		{kind: mcpKind, user: true, write: "write_user_mcp", path: "user_mcp_file", def: "config.toml", file: true},
	},
}

// Name implements target.Adapter.
func (Codex) Name() string { return codexSpec.name }

// Supports implements target.Adapter.
func (Codex) Supports(t module.Type) bool { return codexSpec.supports(t) }

// Validate implements target.Adapter.
func (Codex) Validate(cfg target.Config) error { return codexSpec.validate(cfg) }

// Render implements target.Adapter.
func (c Codex) Render(rc *target.RenderContext, modules []*module.LoadedModule) (*target.Output, error) {
	return c.render(rc, modules, rc.Warn)
}

func (Codex) render(rc *target.RenderContext, modules []*module.LoadedModule, warn warnFunc) (*target.Output, error) {
	r := newRenderer(codexSpec, rc, codexHome(rc), warn)
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
		case module.TypePrompt:
			if dir, ok := r.path("prompts", true); ok {
				r.copyFile(under(dir, mainFile(lm)), lm.Main, lm.ID)
			}
		case module.TypeAgent:
			if dir, ok := r.path("agents", false); ok {
				data, err := r.codexAgent(lm)
				if err != nil {
					return nil, err
				}
				r.add(under(dir, lm.Name()+".toml"), data, 0o644, lm.ID)
			}
		}
	}
	if err := r.mcpServers(modules, codexMCP); err != nil {
		return nil, err
	}
	for _, p := range r.all("instructions") {
		if err := r.instructionsFile(p, instructions); err != nil {
			return nil, err
		}
	}
	return r.output(), nil
}

// codexAgentFile is the TOML of a Codex custom agent.
type codexAgentFile struct {
	Name                  string `toml:"name"`
	Description           string `toml:"description"`
	Model                 string `toml:"model,omitempty"`
	DeveloperInstructions string `toml:"developer_instructions,multiline"`
}

// claudeModelAliases are Claude Code model names that mean nothing to Codex.
var claudeModelAliases = []string{"inherit", "sonnet", "opus", "haiku", "opusplan"}

// codexAgent renders an agent module as Codex agent TOML.
func (r *renderer) codexAgent(lm *module.LoadedModule) ([]byte, error) {
	fm := lm.Frontmatter
	r.dropKeys(lm, "agents", []string{"name", "description", "model"}, nil)
	a := codexAgentFile{
		Name:                  fm.String("name"),
		Description:           fm.String("description"),
		Model:                 fm.String("model"),
		DeveloperInstructions: string(bytes.TrimLeft(lm.Body, "\r\n")),
	}
	if slices.Contains(claudeModelAliases, a.Model) {
		r.warn("module %s: model %q is a Claude Code alias; codex agent written without a model", lm.ID, a.Model)
		a.Model = ""
	}
	return toml.Marshal(a)
}
