package module

import (
	"fmt"
	"sort"
	"strings"

	"github.com/agentpack/agentpack/internal/lazyregexp"
)

// mcpNameRE is what an MCP server name may be (SPEC §4): it becomes a key in
// every client's config file.
var mcpNameRE = lazyregexp.New(`^[A-Za-z0-9_-]{1,64}$`)

// envVarNameRE is a variable name env_vars may list; notVarCharRE what
// one may not hold.
var (
	envVarNameRE = lazyregexp.New(`^[A-Za-z_][A-Za-z0-9_]*$`)
	notVarCharRE = lazyregexp.New(`[^A-Za-z0-9_]`)
)

// refRE is an environment reference: ${VAR}, or ${env:VAR} as Cursor and VS
// Code write it.
var refRE = lazyregexp.New(`\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)\}`)

// MCPError is an invalid MCP server definition. Its message never holds
// the value of a field that looks like a secret.
type MCPError struct {
	Msg  string
	Hint string
}

func (e *MCPError) Error() string { return e.Msg }

// Refs returns the variables s references, e.g. ["TOKEN"] for "Bearer ${TOKEN}".
func Refs(s string) []string {
	var out []string
	for _, m := range refRE.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}

// OnlyRef returns VAR when s is exactly one reference ${VAR} (or ${env:VAR}).
func OnlyRef(s string) (string, bool) {
	m := refRE.FindStringSubmatch(s)
	if m == nil || m[0] != s {
		return "", false
	}
	return m[1], true
}

// MapRefs rewrites every reference in s with f(VAR).
func MapRefs(s string, f func(string) string) string {
	return refRE.ReplaceAllStringFunc(s, func(m string) string { return f(refRE.FindStringSubmatch(m)[1]) })
}

// secretPrefixes start literal credentials that must never sit in a file.
var secretPrefixes = []string{"ghp_", "gho_", "github_pat_", "sk-", "xox", "AKIA"}

// secretKey reports whether a key's name says its value is a secret.
func secretKey(k string) bool {
	u := strings.ToUpper(k)
	for _, w := range []string{"TOKEN", "SECRET", "PASSWORD", "KEY"} {
		if strings.Contains(u, w) {
			return true
		}
	}
	return false
}

// Validate checks s (SPEC §4 "mcp modules in detail"), filling in the
// default transport. Secrets must be references: a literal that looks like
// a credential is refused, and the refusal never repeats it.
func (s *MCPServer) Validate() error {
	if !mcpNameRE.MatchString(s.Name) {
		return &MCPError{Msg: fmt.Sprintf("MCP server name %q must match ^[A-Za-z0-9_-]{1,64}$", s.Name),
			Hint: "set `name:` in the definition to letters, digits, '_' or '-'"}
	}
	switch s.Transport {
	case "", "stdio":
		s.Transport = "stdio"
		if s.Command == "" {
			return &MCPError{Msg: "stdio MCP server needs `command`"}
		}
		if s.URL != "" || len(s.Headers) > 0 {
			return &MCPError{Msg: "stdio MCP server cannot have `url` or `headers`", Hint: "set transport: http for a remote server"}
		}
	case "http":
		if s.URL == "" {
			return &MCPError{Msg: "http MCP server needs `url`"}
		}
		if s.Command != "" || len(s.Args) > 0 {
			return &MCPError{Msg: "http MCP server cannot have `command` or `args`", Hint: "set transport: stdio for a local server"}
		}
	default:
		return &MCPError{Msg: fmt.Sprintf("MCP transport %q must be stdio or http", s.Transport)}
	}
	for _, v := range s.EnvVars {
		if !envVarNameRE.MatchString(v) {
			return &MCPError{Msg: fmt.Sprintf("env_vars entry %q is not a variable name", v)}
		}
	}
	check := func(where, key, v string) error {
		lit := refRE.ReplaceAllString(v, "")
		bad := ""
		for _, p := range secretPrefixes {
			if strings.HasPrefix(strings.TrimSpace(strings.TrimPrefix(lit, "Bearer ")), p) {
				bad = "looks like a credential (" + p + "…)"
			}
		}
		switch {
		case bad == "" && where == "headers" && strings.EqualFold(key, "Authorization") && len(Refs(v)) == 0:
			bad = "is an Authorization header without a reference"
		case bad == "" && key != "" && secretKey(key) && len(Refs(v)) == 0 && v != "":
			bad = "is named like a secret but holds a literal value"
		}
		if bad == "" {
			return nil
		}
		name := where
		if key != "" {
			name += "." + key
		}
		return &MCPError{Msg: fmt.Sprintf("%s %s; agentpack keeps secrets out of config files", name, bad),
			Hint: "write a reference instead, e.g. ${" + suggestVar(key) + "}, and set that variable in the environment the client starts with"}
	}
	for _, k := range sortedKeys(s.Env) {
		if err := check("env", k, s.Env[k]); err != nil {
			return err
		}
	}
	for _, k := range sortedKeys(s.Headers) {
		if err := check("headers", k, s.Headers[k]); err != nil {
			return err
		}
	}
	for _, a := range s.Args {
		if err := check("args", "", a); err != nil {
			return err
		}
	}
	if err := check("url", "", s.URL); err != nil {
		return err
	}
	return nil
}

func suggestVar(key string) string {
	v := strings.ToUpper(notVarCharRE.ReplaceAllString(key, "_"))
	if v == "" || v == "AUTHORIZATION" {
		return "API_TOKEN"
	}
	return v
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
