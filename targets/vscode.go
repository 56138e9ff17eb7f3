package targets

import (
	"path/filepath"
	"strings"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/internal/frontmatter"
	"go.yaml.in/yaml/v3"
)

// VSCode is the adapter for VS Code with GitHub Copilot (project scope only).
type VSCode struct{}

var vscodeSpec = &targetSpec{
	name:        "vscode",
	types:       []engine.ModuleType{engine.TypeInstructions, engine.TypeSkill, engine.TypePrompt, engine.TypeAgent},
	projectOnly: true,
	outputs: []output{
		{kind: "instructions", write: "write_instructions", path: "instructions_file", def: ".github/copilot-instructions.md", file: true},
		{kind: "scoped_instructions", write: "write_scoped_instructions", path: "scoped_instructions_dir", def: ".github/instructions"},
		{kind: "skills", write: "write_skills", path: "skills_dir", def: ".github/skills"},
		{kind: "prompts", write: "write_prompts", path: "prompts_dir", def: ".github/prompts"},
		{kind: "agents", write: "write_agents", path: "agents_dir", def: ".github/agents"},
	},
}

// vscodeAgentKeys is the frontmatter a VS Code custom agent (.agent.md) keeps.
var vscodeAgentKeys = []string{"name", "description", "tools", "model", "argument-hint", "handoffs", "target", "infer", "mcp-servers"}

// Name implements engine.Target.
func (VSCode) Name() string { return vscodeSpec.name }

// Supports implements engine.Target.
func (VSCode) Supports(t engine.ModuleType) bool { return vscodeSpec.supports(t) }

// DefaultScope implements engine.ScopeDefaulter: project is the only scope.
func (VSCode) DefaultScope() engine.Scope { return engine.ScopeProject }

// Validate implements engine.Target.
func (VSCode) Validate(cfg engine.TargetConfig) error { return vscodeSpec.validate(cfg) }

// Render implements engine.Target.
func (v VSCode) Render(rc *engine.RenderContext, modules []*engine.LoadedModule) (*engine.TargetOutput, error) {
	return v.render(rc, modules, rc.Warn)
}

func (VSCode) render(rc *engine.RenderContext, modules []*engine.LoadedModule, warn warnFunc) (*engine.TargetOutput, error) {
	r := newRenderer(vscodeSpec, rc, rc.ProjectRoot, warn)
	var instructions []*engine.LoadedModule
	for _, lm := range modules {
		switch lm.Type {
		case engine.TypeInstructions:
			if !hasValue(lm.Frontmatter, "applyTo") {
				instructions = append(instructions, lm)
			} else if dir, ok := r.path("scoped_instructions", false); ok {
				r.add(filepath.Join(dir, lm.Name()+".instructions.md"), r.scopedInstructions(lm), 0o644, lm.ID)
			}
		case engine.TypeSkill:
			if dir, ok := r.path("skills", false); ok {
				r.copyModule(filepath.Join(dir, lm.Name()), lm)
			}
		case engine.TypePrompt:
			if dir, ok := r.path("prompts", false); ok {
				r.add(filepath.Join(dir, promptFileName(mainFile(lm))), lm.Main.Data, lm.Main.Mode, lm.ID)
			}
		case engine.TypeAgent:
			if dir, ok := r.path("agents", false); ok {
				r.add(filepath.Join(dir, lm.Name()+".agent.md"), r.markdownAgent(lm, vscodeAgentKeys), 0o644, lm.ID)
			}
		}
	}
	if p, ok := r.path("instructions", false); ok {
		if err := r.instructionsFile(p, instructions); err != nil {
			return nil, err
		}
	}
	return r.output(), nil
}

// promptFileName gives a prompt file the .prompt.md suffix VS Code discovers,
// without doubling it.
func promptFileName(base string) string {
	lower := strings.ToLower(base)
	switch {
	case strings.HasSuffix(lower, ".prompt.md"):
		return base
	case strings.HasSuffix(lower, ".md"):
		return base[:len(base)-3] + ".prompt.md"
	}
	return base + ".prompt.md"
}

// scopedInstructions renders a module with applyTo as a VS Code
// .instructions.md file that keeps applyTo and description.
func (r *renderer) scopedInstructions(lm *engine.LoadedModule) []byte {
	r.dropKeys(lm, "instructions", []string{"applyTo", "description"}, instructionMeta)
	fm := lm.Frontmatter.Subset("applyTo", "description")
	return fm.Render(append([]byte("\n"), instructionBody(lm)...))
}

// hasValue reports whether key is set to something other than null or "".
func hasValue(fm *frontmatter.Block, key string) bool {
	n := fm.Node(key)
	return n != nil && n.Tag != "!!null" && !(n.Kind == yaml.ScalarNode && strings.TrimSpace(n.Value) == "")
}
