package targets

import (
	"strings"

	"github.com/agentpack/agentpack/engine/module"
	"github.com/agentpack/agentpack/engine/target"
	"github.com/agentpack/agentpack/internal/frontmatter"
	"go.yaml.in/yaml/v3"
)

// VSCode is the adapter for VS Code with GitHub Copilot (project scope only).
type VSCode struct{}

var vscodeSpec = &targetSpec{
	name:        "vscode",
	types:       []module.Type{module.TypeInstructions, module.TypeSkill, module.TypePrompt, module.TypeAgent, module.TypeMCP},
	projectOnly: true,
	outputs: []output{
		{kind: "instructions", write: "write_instructions", path: "instructions_file", def: ".github/copilot-instructions.md", file: true},
		{kind: "scoped_instructions", write: "write_scoped_instructions", path: "scoped_instructions_dir", def: ".github/instructions"},
		{kind: "skills", write: "write_skills", path: "skills_dir", def: ".github/skills"},
		{kind: "prompts", write: "write_prompts", path: "prompts_dir", def: ".github/prompts"},
		{kind: "agents", write: "write_agents", path: "agents_dir", def: ".github/agents"},
		{kind: mcpKind, write: "write_mcp", path: "mcp_file", def: ".vscode/mcp.json", file: true},
	},
}

// vscodeAgentKeys is the frontmatter a VS Code custom agent (.agent.md) keeps.
var vscodeAgentKeys = []string{"name", "description", "tools", "model", "argument-hint", "handoffs", "target", "infer", "mcp-servers"}

// Name implements target.Adapter.
func (VSCode) Name() string { return vscodeSpec.name }

// Supports implements target.Adapter.
func (VSCode) Supports(t module.Type) bool { return vscodeSpec.supports(t) }

// DefaultScope implements target.ScopeDefaulter: project is the only scope.
func (VSCode) DefaultScope() target.Scope { return target.ScopeProject }

// Validate implements target.Adapter.
func (VSCode) Validate(cfg target.Config) error { return vscodeSpec.validate(cfg) }

// Render implements target.Adapter.
func (v VSCode) Render(rc *target.RenderContext, modules []*module.LoadedModule) (*target.Output, error) {
	return v.render(rc, modules, rc.Warn)
}

func (VSCode) render(rc *target.RenderContext, modules []*module.LoadedModule, warn warnFunc) (*target.Output, error) {
	r := newRenderer(vscodeSpec, rc, rc.ProjectRoot, warn)
	r.reserve(modules)
	var instructions []*module.LoadedModule
	for _, lm := range modules {
		switch lm.Type {
		case module.TypeInstructions:
			if !hasValue(lm.Frontmatter, "applyTo") {
				instructions = append(instructions, lm)
			} else if dir, ok := r.path("scoped_instructions", false); ok {
				r.add(under(dir, lm.Name()+".instructions.md"), r.scopedInstructions(lm), 0o644, lm.ID)
			}
		case module.TypeSkill:
			if dir, ok := r.path("skills", false); ok {
				r.copyModule(under(dir, lm.Name()), lm)
			}
		case module.TypePrompt:
			if dir, ok := r.path("prompts", false); ok {
				r.copyFile(under(dir, promptFileName(mainFile(lm))), lm.Main, lm.ID)
			}
		case module.TypeAgent:
			if dir, ok := r.path("agents", false); ok {
				r.add(under(dir, lm.Name()+".agent.md"), r.markdownAgent(lm, vscodeAgentKeys), 0o644, lm.ID)
			}
		}
	}
	if p, ok := r.path("instructions", false); ok {
		if err := r.instructionsFile(p, instructions); err != nil {
			return nil, err
		}
	}
	if err := r.mcpServers(modules, vscodeMCP); err != nil {
		return nil, err
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
func (r *renderer) scopedInstructions(lm *module.LoadedModule) []byte {
	r.dropKeys(lm, "instructions", []string{"applyTo", "description"}, instructionMeta)
	fm := lm.Frontmatter.Subset("applyTo", "description")
	return fm.Render(append([]byte("\n"), instructionBody(lm)...))
}

// hasValue reports whether key is set to something other than null or "".
func hasValue(fm *frontmatter.Block, key string) bool {
	n := fm.Node(key)
	return n != nil && n.Tag != "!!null" && !(n.Kind == yaml.ScalarNode && strings.TrimSpace(n.Value) == "")
}
