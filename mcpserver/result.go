package mcpserver

import (
	"encoding/json"
	"fmt"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/envelope"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// toolResult turns an envelope into a tool result: structuredContent is the
// envelope, the one text block is the same JSON the CLI prints under
// --json, and a failure sets isError with "[E_CODE] message" first.
func toolResult(env *envelope.Envelope) *mcp.CallToolResult {
	b := env.JSON()
	text := string(b)
	if !env.OK && len(env.Errors) > 0 {
		e := env.Errors[0]
		text = fmt.Sprintf("[%s] %s\n", e.Code, e.Message) + text
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: text}},
		StructuredContent: json.RawMessage(b),
		IsError:           !env.OK,
	}
}

// fail returns the failure envelope of a tool whose call never reached the
// engine.
func (t *tool) fail(err error) *envelope.Envelope {
	return envelope.New(t.command, t.commandID).Fail(err, nil)
}

// finish completes env with the outcome of one engine call: data on
// success, the error on failure, with the call's warnings either way.
func finish[T any](env *envelope.Envelope, data T, warnings []string, err error) *envelope.Envelope {
	if err != nil {
		return env.Fail(err, warnings)
	}
	return env.Succeed(data, warnings)
}

// warningsOf keeps the warnings gathered before a failure, as the CLI does.
func warningsOf(st *engine.State) []string {
	if st == nil {
		return nil
	}
	return st.Warnings
}

// noRepoWarning says whether err is the E_CONFIG_MISSING of a machine where
// no desired-state repo was created yet, and returns the warning that
// plan, status, source_list and agentpack://sources answer with instead,
// next to empty data: nothing to deploy is not a failure. That is the
// default repo only (no repo argument, no --repo); a repo named on purpose
// that has no agentpack.yaml stays an error, as it is most likely a typo.
func noRepoWarning(req engine.Request, err error) (string, bool) {
	if req.Repo != "" || apperr.CodeOf(err) != apperr.ConfigMissing {
		return "", false
	}
	return apperr.As(err).Message + "; create one with `agentpack init`, or pass repo", true
}
