package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/agentpack/agentpack/internal/apperr"
)

// compileSchema compiles a tool's advertised input schema with the string
// limit added ([limitStrings]), so calls are validated against what clients
// see plus maxLength.
func compileSchema(name string, raw json.RawMessage) (*argSchema, error) {
	limited, err := limitStrings(raw)
	if err != nil {
		return nil, fmt.Errorf("tool %s: schema is not JSON: %w", name, err)
	}
	s, err := compileArgSchema(limited)
	if err != nil {
		return nil, fmt.Errorf("tool %s: %w", name, err)
	}
	return s, nil
}

// problem is one schema violation of a call's arguments.
type problem struct {
	// property is the top-level argument at fault ("" for the whole object).
	property string
	pointer  string
	message  string
}

// String renders the problem, quoting at most maxEcho bytes of its pointer
// (an unknown argument's name comes from the caller and can be any size).
func (p problem) String() string { return capEcho(p.pointer) + ": " + p.message }

// checkArgs validates raw arguments against t's schema and decodes them. It
// is the one place every call is validated, whatever the client checked.
// A missing or non-true `yes` is E_CONFIRM_REQUIRED; any other violation is
// E_INVALID_ARGUMENT naming the property. Other violations are reported
// first: confirming a call that cannot run would not help.
func (t *tool) checkArgs(raw json.RawMessage) (*args, error) {
	if len(raw) > maxArgumentsBytes {
		return nil, argsTooLarge(t.name, len(raw))
	}
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		raw = json.RawMessage("{}")
	}
	v, err := decodeJSON(raw)
	if err != nil {
		return nil, apperr.New(apperr.InvalidArgument, "arguments are not valid JSON: %v", err).
			WithHint("pass the arguments as one JSON object").With("reason_code", "invalid_argument")
	}
	var probs []problem
	if t.compiled.validate(v, nil, &probs); len(probs) > 0 {
		return nil, t.argError(probs)
	}
	var a args
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, apperr.New(apperr.InvalidArgument, "cannot decode the arguments: %v", err).
			WithHint("check the tool's inputSchema").With("reason_code", "invalid_argument")
	}
	return &a, nil
}

// argsTooLarge refuses a call whose arguments exceed maxArgumentsBytes,
// before they are validated or decoded.
func argsTooLarge(toolName string, size int) error {
	return apperr.New(apperr.InvalidArgument, "invalid arguments: %d bytes of JSON, over the limit of %d", size, maxArgumentsBytes).
		WithHint("string arguments take at most %d characters; pass paths, names and ids, not file contents", maxStringArg).
		With("property", "").With("tool", toolName).With("size", size).With("limit", maxArgumentsBytes).
		With("reason_code", "invalid_argument").With("next_actions", []string{"fix_arguments"})
}

// maxProblems caps the problems listed in an argument error; an array or
// object with thousands of bad entries would otherwise list each.
const maxProblems = 20

func (t *tool) argError(probs []problem) error {
	var confirm bool
	var other []problem
	for _, p := range probs {
		if p.property == "yes" {
			confirm = true
			continue
		}
		other = append(other, p)
	}
	if len(other) == 0 && confirm {
		return confirmRequired(t.commandID, t.name)
	}
	if len(other) == 0 { // defensive: a failure always carries a problem
		other = []problem{{pointer: "/", message: "arguments do not match the input schema"}}
	}
	first := other[0]
	texts := make([]string, 0, min(len(other), maxProblems+1))
	for i, p := range other {
		if i == maxProblems {
			texts = append(texts, fmt.Sprintf("… and %d more", len(other)-maxProblems))
			break
		}
		texts = append(texts, p.String())
	}
	property := capEcho(first.property) // an unknown argument's name
	msg := fmt.Sprintf("invalid arguments: %s", first.message)
	if first.property != "" {
		msg = fmt.Sprintf("invalid argument %q: %s", property, first.message)
	}
	return apperr.New(apperr.InvalidArgument, "%s", msg).
		WithHint("valid arguments of %s: %s", t.name, strings.Join(t.propertyNames(), ", ")).
		With("property", property).With("problems", texts).With("tool", t.name).
		With("reason_code", "invalid_argument").With("next_actions", []string{"fix_arguments"})
}

// confirmRequired is the refusal of a write tool called without yes=true,
// worded like the CLI's refusal without --yes.
func confirmRequired(commandID, toolName string) error {
	return apperr.New(apperr.ConfirmRequired, "refusing to run '%s' without yes=true", commandID).
		WithHint("call %s again with yes: true to confirm; nothing was written", toolName).
		With("command", commandID).With("property", "yes").
		With("reason_code", "confirm_required").With("next_actions", []string{"retry_with_yes"})
}

// propertyNames lists the tool's argument names, sorted.
func (t *tool) propertyNames() []string {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	_ = json.Unmarshal(t.schema, &s)
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
