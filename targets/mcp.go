package targets

import (
	"io/fs"
	"slices"
	"sort"
	"strings"

	"github.com/agentpack/agentpack/engine/module"
	"github.com/agentpack/agentpack/engine/target"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/cfgedit"
	"github.com/agentpack/agentpack/internal/fsys"
)

// mcpShape is how one client writes MCP servers: the syntax of its config
// file, the object holding the servers, and the entry for one server.
type mcpShape struct {
	format    cfgedit.Format
	container []string
	entry     func(s *module.MCPServer, warn func(format string, args ...any)) map[string]any
}

// mcpKind is the output kind of key-level MCP config files, whose
// root is added only when a server is written to them (the folder holding
// ~/.claude.json is $HOME, which no target should claim for nothing).
const mcpKind = "mcp"

// mcpServers renders the mcp modules into every enabled mcp output of r,
// one key-level file per output holding one entry per server.
func (r *renderer) mcpServers(modules []*module.LoadedModule, shape mcpShape) error {
	var mods []*module.LoadedModule
	for _, lm := range modules {
		if lm.Type == module.TypeMCP && lm.MCP != nil {
			mods = append(mods, lm)
		}
	}
	if len(mods) == 0 {
		return nil
	}
	for _, user := range []bool{true, false} {
		p, ok := r.mcpPaths[user]
		if !ok {
			continue
		}
		k := &target.KeyedFile{Format: shape.format, Container: shape.container}
		var ids []string
		for _, lm := range mods {
			if prev := k.Entry(lm.MCP.Name); prev != nil {
				return apperr.New(apperr.DesiredStateConflict, "modules %s and %s both define the MCP server %q for %s",
					strings.Join(prev.ModuleIDs, ","), lm.ID, lm.MCP.Name, r.spec.name).
					WithHint("give one of the servers another `name:`, or limit a module with `targets:`").
					With("path", p.String()).With("path_posix", p.ToSlash()).With("target", r.spec.name).With("entry", lm.MCP.Name)
			}
			warn := func(format string, args ...any) {
				r.warn("module %s: "+format, append([]any{lm.ID}, args...)...)
			}
			k.Entries = append(k.Entries, target.KeyedEntry{Name: lm.MCP.Name, Value: shape.entry(lm.MCP, warn), ModuleIDs: []string{lm.ID}})
			ids = append(ids, lm.ID)
		}
		sort.Slice(k.Entries, func(i, j int) bool { return k.Entries[i].Name < k.Entries[j].Name })
		sort.Strings(ids)
		var mode fs.FileMode = 0o644
		if user {
			mode = 0o600 // user config files hold the user's own tokens too
		}
		r.files = append(r.files, target.DesiredFile{Path: p, Mode: mode, ModuleIDs: ids, Keyed: k})
		r.addRoot(p.Dir(), false)
	}
	return nil
}

// mcpEnv is a server's environment for a JSON client: env values with
// references rewritten by ref, and each env_vars name passed through as a
// reference to itself.
func mcpEnv(s *module.MCPServer, ref func(string) string) map[string]any {
	if len(s.Env) == 0 && len(s.EnvVars) == 0 {
		return nil
	}
	env := map[string]any{}
	for k, v := range s.Env {
		env[k] = module.MapRefs(v, ref)
	}
	for _, v := range s.EnvVars {
		if _, ok := env[v]; !ok {
			env[v] = ref(v)
		}
	}
	return env
}

func mapRefs(m map[string]string, ref func(string) string) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = module.MapRefs(v, ref)
	}
	return out
}

func plainRef(v string) string { return "${" + v + "}" }
func envRef(v string) string   { return "${env:" + v + "}" }

// jsonEntry is the entry shared by Claude Code and Cursor (`mcpServers`),
// and with typ by VS Code (`servers`).
func jsonEntry(s *module.MCPServer, ref func(string) string, typ, cwd bool, warn func(string, ...any)) map[string]any {
	e := map[string]any{}
	if s.Transport == "http" {
		e["type"] = "http"
		e["url"] = module.MapRefs(s.URL, ref)
		if len(s.Headers) > 0 {
			e["headers"] = mapRefs(s.Headers, ref)
		}
		return e
	}
	if typ {
		e["type"] = "stdio"
	}
	e["command"] = module.MapRefs(s.Command, ref)
	if len(s.Args) > 0 {
		args := make([]string, len(s.Args))
		for i, a := range s.Args {
			args[i] = module.MapRefs(a, ref)
		}
		e["args"] = args
	}
	if env := mcpEnv(s, ref); env != nil {
		e["env"] = env
	}
	if s.Cwd != "" {
		if cwd {
			e["cwd"] = s.Cwd
		} else {
			warn("`cwd` dropped (this client's MCP config has no working directory)")
		}
	}
	return e
}

var (
	claudeMCP = mcpShape{format: cfgedit.JSON, container: []string{"mcpServers"},
		entry: func(s *module.MCPServer, warn func(string, ...any)) map[string]any {
			return jsonEntry(s, plainRef, false, false, warn)
		}}
	cursorMCP = mcpShape{format: cfgedit.JSON, container: []string{"mcpServers"},
		entry: func(s *module.MCPServer, warn func(string, ...any)) map[string]any {
			e := jsonEntry(s, envRef, false, false, warn)
			delete(e, "type") // Cursor tells a remote server by its url
			return e
		}}
	vscodeMCP = mcpShape{format: cfgedit.JSON, container: []string{"servers"},
		entry: func(s *module.MCPServer, warn func(string, ...any)) map[string]any {
			return jsonEntry(s, envRef, true, true, warn)
		}}
	codexMCP = mcpShape{format: cfgedit.TOML, container: []string{"mcp_servers"}, entry: codexEntry}
)

// codexEntry is a `[mcp_servers.<name>]` table: Codex passes variables by
// name (env_vars, bearer_token_env_var, env_http_headers), never a ${VAR}
// inside a value, so only whole-value references can be written.
func codexEntry(s *module.MCPServer, warn func(string, ...any)) map[string]any {
	e := map[string]any{}
	if s.Transport == "http" {
		e["url"] = s.URL
		if len(module.Refs(s.URL)) > 0 {
			warn("the url holds a reference, which Codex does not expand")
		}
		literal, byEnv := map[string]any{}, map[string]any{}
		for k, v := range s.Headers {
			if strings.EqualFold(k, "Authorization") {
				if tok, ok := module.OnlyRef(strings.TrimPrefix(v, "Bearer ")); ok && strings.HasPrefix(v, "Bearer ") {
					e["bearer_token_env_var"] = tok
					continue
				}
			}
			switch ref, ok := module.OnlyRef(v); {
			case ok:
				byEnv[k] = ref
			case len(module.Refs(v)) == 0:
				literal[k] = v
			default:
				warn("header %s dropped: Codex can take a header from a variable only as its whole value", k)
			}
		}
		if len(literal) > 0 {
			e["http_headers"] = literal
		}
		if len(byEnv) > 0 {
			e["env_http_headers"] = byEnv
		}
		return e
	}
	e["command"] = s.Command
	if len(s.Args) > 0 {
		e["args"] = slices.Clone(s.Args)
	}
	env := map[string]any{}
	vars := slices.Clone(s.EnvVars)
	for k, v := range s.Env {
		switch ref, ok := module.OnlyRef(v); {
		case ok && ref == k:
			vars = append(vars, k)
		case len(module.Refs(v)) == 0:
			env[k] = v
		default:
			warn("env %s dropped: Codex passes a variable only under its own name (env_vars)", k)
		}
	}
	if len(env) > 0 {
		e["env"] = env
	}
	if len(vars) > 0 {
		sort.Strings(vars)
		e["env_vars"] = slices.Compact(vars)
	}
	if s.Cwd != "" {
		e["cwd"] = s.Cwd
	}
	return e
}

// resolveMCP resolves the enabled mcp outputs by scope (user: true).
func (r *renderer) resolveMCP(spec *targetSpec, rc *target.RenderContext, home fsys.AbsPath) {
	r.mcpPaths = map[bool]fsys.AbsPath{}
	for _, o := range spec.outputs {
		if o.kind != mcpKind || (o.user && !rc.Scope.User()) || (!o.user && !rc.Scope.Project()) || !o.enabled(rc.Config) {
			continue
		}
		base := rc.ProjectRoot
		if o.user {
			base = home
		}
		r.mcpPaths[o.user] = resolvePath(rc, base, rc.Config.OptionString(o.path, o.def))
	}
}
