package targets

import (
	"bytes"
	"path/filepath"
	"slices"

	"github.com/agentpack/agentpack/engine"
	"github.com/pelletier/go-toml/v2"
)

// Codex is the adapter for OpenAI Codex (CLI and IDE).
type Codex struct{}

var codexSpec = &targetSpec{
	name:       "codex",
	types:      []engine.ModuleType{engine.TypeInstructions, engine.TypeSkill, engine.TypePrompt, engine.TypeAgent},
	homeOption: "codex_home",
	outputs: []output{
		{kind: "instructions", user: true, write: "write_agents_global", alias: "write_user_instructions", path: "user_instructions_file", def: "AGENTS.md", file: true},
		{kind: "instructions", write: "write_agents_repo_root", alias: "write_repo_instructions", path: "repo_instructions_file", def: "AGENTS.md", file: true},
		{kind: "skills", user: true, write: "write_user_skills", path: "user_skills_dir", def: "skills"},
		{kind: "skills", write: "write_repo_skills", path: "repo_skills_dir", def: ".agents/skills"},
		{kind: "prompts", user: true, write: "write_user_prompts", path: "user_prompts_dir", def: "prompts"},
		{kind: "agents", write: "write_repo_agents", path: "repo_agents_dir", def: ".codex/agents"},
	},
}

// Name implements engine.Target.
func (Codex) Name() string { return codexSpec.name }

// Supports implements engine.Target.
func (Codex) Supports(t engine.ModuleType) bool { return codexSpec.supports(t) }

// Validate implements engine.Target.
func (Codex) Validate(cfg engine.TargetConfig) error { return codexSpec.validate(cfg) }

// Render implements engine.Target.
func (c Codex) Render(rc *engine.RenderContext, modules []*engine.LoadedModule) (*engine.TargetOutput, error) {
	return c.render(rc, modules, rc.Warn)
}

func (Codex) render(rc *engine.RenderContext, modules []*engine.LoadedModule, warn warnFunc) (*engine.TargetOutput, error) {
	r := newRenderer(codexSpec, rc, codexHome(rc), warn)
	var instructions []*engine.LoadedModule
	for _, lm := range modules {
		switch lm.Type {
		case engine.TypeInstructions:
			instructions = append(instructions, lm)
		case engine.TypeSkill:
			for _, dir := range r.all("skills") {
				r.copyModule(filepath.Join(dir, lm.Name()), lm)
			}
		case engine.TypePrompt:
			if dir, ok := r.path("prompts", true); ok {
				r.add(filepath.Join(dir, mainFile(lm)), lm.Main.Data, lm.Main.Mode, lm.ID)
			}
		case engine.TypeAgent:
			if dir, ok := r.path("agents", false); ok {
				data, err := r.codexAgent(lm)
				if err != nil {
					return nil, err
				}
				r.add(filepath.Join(dir, lm.Name()+".toml"), data, 0o644, lm.ID)
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
func (r *renderer) codexAgent(lm *engine.LoadedModule) ([]byte, error) {
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
