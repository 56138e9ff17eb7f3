package mcpserver

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/engine/module"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/lazyregexp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// argumentsPlaceholder is replaced by the prompt's `arguments` argument.
const argumentsPlaceholder = "$ARGUMENTS"

// promptArgName is the one argument a prompt may take.
const promptArgName = "arguments"

var unsafePromptChars = lazyregexp.New(`[^A-Za-z0-9_-]`)

// PromptName is the MCP prompt name of a module id: every character other
// than A-Z a-z 0-9 _ - becomes '_' (command:ap-plan → command_ap-plan).
func PromptName(id string) string { return unsafePromptChars.ReplaceAllString(id, "_") }

// promptModule is one module served as a prompt.
type promptModule struct {
	prompt *mcp.Prompt
	module *module.LoadedModule
}

// loadPrompts lists the prompt, command and agent modules of req's profile,
// read fresh. When two ids map to the same name, the first (in id order,
// the order the engine loads modules) wins.
func loadPrompts(ctx context.Context, eng *engine.Engine, req engine.Request) ([]promptModule, error) {
	st, err := eng.Load(ctx, req)
	if err != nil {
		return nil, err
	}
	var out []promptModule
	seen := map[string]bool{}
	for _, lm := range st.Modules {
		switch lm.Type {
		case module.TypePrompt, module.TypeCommand, module.TypeAgent:
		default:
			continue
		}
		name := PromptName(lm.ID)
		if seen[name] {
			continue
		}
		seen[name] = true
		p := &mcp.Prompt{Name: name, Title: lm.ID, Description: lm.Frontmatter.String("description")}
		if p.Description == "" {
			p.Description = fmt.Sprintf("agentpack %s module %s", lm.Type, lm.ID)
		}
		hint := lm.Frontmatter.String("argument-hint")
		if hint != "" || bytes.Contains(lm.Body, []byte(argumentsPlaceholder)) {
			desc := "Text that replaces $ARGUMENTS in the prompt."
			if hint != "" {
				desc = "Arguments: " + hint
			}
			p.Arguments = []*mcp.PromptArgument{{Name: promptArgName, Description: desc}}
		}
		out = append(out, promptModule{prompt: p, module: lm})
	}
	return out, nil
}

// renderPrompt returns the module body with $ARGUMENTS replaced.
func renderPrompt(pm promptModule, arguments map[string]string) *mcp.GetPromptResult {
	body := strings.ReplaceAll(string(pm.module.Body), argumentsPlaceholder, arguments[promptArgName])
	return &mcp.GetPromptResult{
		Description: pm.prompt.Description,
		Messages:    []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: body}}},
	}
}

// getPrompt renders the named prompt; an unknown name is ModuleNotFound.
func getPrompt(ctx context.Context, eng *engine.Engine, req engine.Request, name string, arguments map[string]string) (*mcp.GetPromptResult, error) {
	list, err := loadPrompts(ctx, eng, req)
	if err != nil {
		return nil, err
	}
	for _, pm := range list {
		if pm.prompt.Name == name {
			for k := range arguments {
				if k != promptArgName || pm.prompt.Arguments == nil {
					return nil, apperr.New(apperr.InvalidArgument, "prompt %s has no argument %q", name, k).With("property", k)
				}
			}
			return renderPrompt(pm, arguments), nil
		}
	}
	return nil, apperr.New(apperr.ModuleNotFound, "unknown prompt %q", name).
		WithHint("list prompts with prompts/list").With("prompt", name)
}
