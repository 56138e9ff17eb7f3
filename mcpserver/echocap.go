package mcpserver

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agentpack/agentpack/internal/envelope"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxEcho is how much of a caller's value an error message or detail
// quotes. Errors name the value to help the caller find it; echoing all of
// it would turn one large argument into a response several times larger.
const maxEcho = 200

// capEcho returns s, or its first maxEcho bytes followed by "…(N bytes)".
func capEcho(s string) string { return capBytes(s, maxEcho) }

// capBytes returns s, or its first n bytes (cut at a rune boundary)
// followed by "…(N bytes)", N being the length of s.
func capBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…(" + strconv.Itoa(len(s)) + " bytes)"
}

// capToolEchoes shortens, in a failed tool result, every quote of an
// argument value longer than maxEcho: errors[].message, errors[].details
// and the warnings. The engine words its errors for the CLI, where a value
// is as long as the user typed it; over MCP a caller can send thousands of
// characters per argument. A successful result is returned as it is.
func capToolEchoes(res *mcp.CallToolResult, rawArgs json.RawMessage) *mcp.CallToolResult {
	if res == nil || !res.IsError {
		return res
	}
	long := longArgValues(rawArgs)
	if len(long) == 0 {
		return res
	}
	var b []byte
	switch sc := res.StructuredContent.(type) {
	case json.RawMessage:
		b = sc
	case []byte:
		b = sc
	default:
		return res
	}
	var env envelope.Envelope
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if dec.Decode(&env) != nil || env.OK || len(env.Errors) == 0 {
		return res
	}
	r := newEchoReplacer(long)
	for i := range env.Errors {
		e := &env.Errors[i]
		e.Message = r.Replace(e.Message)
		if d, ok := replaceStrings(e.Details, r).(map[string]any); ok {
			e.Details = d
		}
	}
	for i, w := range env.Warnings {
		env.Warnings[i] = r.Replace(w)
	}
	return toolResult(&env)
}

// longArgValues returns the string values (top level and inside arrays)
// of a call's arguments that are longer than maxEcho.
func longArgValues(raw json.RawMessage) []string {
	var top map[string]any
	if json.Unmarshal(raw, &top) != nil {
		return nil
	}
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			if len(v) > maxEcho {
				out = append(out, v)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	for _, v := range top {
		walk(v)
	}
	return out
}

// echoReplacer replaces each long value, as typed, quoted with %q or as a
// cleaned path, with its capped form; longer forms are replaced first.
type echoReplacer []string

func newEchoReplacer(long []string) echoReplacer {
	seen := map[string]bool{}
	var forms echoReplacer
	add := func(s string) {
		if len(s) > maxEcho && !seen[s] {
			seen[s] = true
			forms = append(forms, s)
		}
	}
	for _, v := range long {
		add(v)
		add(strings.TrimSuffix(strings.TrimPrefix(strconv.Quote(v), `"`), `"`))
		add(filepath.Clean(v))
	}
	sort.Slice(forms, func(i, j int) bool { return len(forms[i]) > len(forms[j]) })
	return forms
}

// Replace caps every form in s. It uses strings.ReplaceAll, linear in the
// lengths, where a strings.Replacer is quadratic on repetitive values.
func (r echoReplacer) Replace(s string) string {
	for _, f := range r {
		if len(f) <= len(s) {
			s = strings.ReplaceAll(s, f, capEcho(f))
		}
	}
	return s
}

// replaceStrings applies r to every string inside v (maps, slices).
func replaceStrings(v any, r echoReplacer) any {
	switch v := v.(type) {
	case string:
		return r.Replace(v)
	case map[string]any:
		for k, x := range v {
			v[k] = replaceStrings(x, r)
		}
		return v
	case []any:
		for i, x := range v {
			v[i] = replaceStrings(x, r)
		}
		return v
	}
	return v
}
