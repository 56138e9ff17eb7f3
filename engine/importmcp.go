package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"slices"
	"sort"

	"github.com/agentpack/agentpack/engine/module"
	"github.com/agentpack/agentpack/engine/plan"
	"github.com/agentpack/agentpack/internal/cfgedit"
	"github.com/agentpack/agentpack/internal/fsys"
	"go.yaml.in/yaml/v3"
)

// mcpImportSpots are the client config files whose MCP servers import
// turns into mcp modules, one module per server entry.
func mcpImportSpots(home, codexHome, proj string) []importSpot {
	j := filepath.Join
	return []importSpot{
		{"codex", "user", module.TypeMCP, codexHome, "config.toml", ""},
		{"claude_code", "user", module.TypeMCP, home, ".claude.json", ""},
		{"claude_code", "project", module.TypeMCP, proj, ".mcp.json", ""},
		{"cursor", "project", module.TypeMCP, j(proj, ".cursor"), "mcp.json", ""},
		{"vscode", "project", module.TypeMCP, j(proj, ".vscode"), "mcp.json", ""},
	}
}

// mcpFormat is the syntax and container of a client's MCP config file.
func mcpFormat(target string) (cfgedit.Format, []string) {
	switch target {
	case "codex":
		return cfgedit.TOML, []string{"mcp_servers"}
	case "vscode":
		return cfgedit.JSON, []string{"servers"}
	}
	return cfgedit.JSON, []string{"mcpServers"}
}

// findMCP lists the server entries of one client config file, each as an
// asset whose one file is the module's YAML definition. Entries agentpack
// owns are skipped as managed; entries that hold a literal secret are
// skipped as invalid (the warning never repeats the value).
func (ip *importPlanner) findMCP(sp importSpot) []*importFound {
	p := filepath.Join(sp.dir, sp.file)
	data, err := ip.e.Sys.ReadFile(fsys.AbsPath(p))
	if err != nil {
		return nil
	}
	format, container := mcpFormat(sp.target)
	names, err := cfgedit.Names(format, data, container)
	if err != nil {
		ip.warn("import: skipping %s: it does not parse (%v)", p, err)
		return nil
	}
	owned := ip.ownedEntries(sp.dir, sp.file)
	var out []*importFound
	for _, name := range names {
		f := &importFound{spot: sp, path: p + "#" + name, name: name, fileName: name + ".yaml"}
		out = append(out, f)
		if owned[name] {
			f.skip = ImportSkipManaged
			continue
		}
		canon, err := cfgedit.Get(format, data, container, name)
		if err != nil || canon == nil {
			f.skip = ImportSkipInvalid
			continue
		}
		s, dropped := mcpFromEntry(sp.target, name, canon)
		for _, k := range dropped {
			ip.warn("import: %s: key %q has no place in an mcp module; dropped", f.path, k)
		}
		if err := s.Validate(); err != nil {
			ip.warn("import: skipping %s: %s", f.path, err.Error())
			f.skip = ImportSkipInvalid
			continue
		}
		b, err := yaml.Marshal(s)
		if err != nil {
			f.skip = ImportSkipInvalid
			continue
		}
		f.files = []module.File{{Path: f.fileName, Data: b, Mode: 0o644}}
		h := sha256.Sum256(b)
		f.hash = hex.EncodeToString(h[:])
	}
	return out
}

// ownedEntries are the entries a target manifest in dir says agentpack
// owns in file.
func (ip *importPlanner) ownedEntries(dir, file string) map[string]bool {
	out := map[string]bool{}
	ents, _ := ip.e.Sys.ReadDir(fsys.AbsPath(dir))
	for _, ent := range ents {
		if !plan.IsTargetManifestName(ent.Name()) {
			continue
		}
		data, err := ip.e.Sys.ReadFile(fsys.AbsPath(dir).JoinName(ent.Name()))
		var tm plan.TargetManifest
		if err != nil || json.Unmarshal(data, &tm) != nil {
			continue
		}
		for _, mf := range tm.ManagedFiles {
			if mf.Path == file && mf.KeyLevel != nil {
				for _, e := range mf.KeyLevel.Entries {
					out[e.Name] = true
				}
			}
		}
	}
	return out
}

// mcpFromEntry turns a client's entry (canonical JSON) back into a server
// definition: ${env:VAR} becomes ${VAR}, Codex's variables by name become
// references. It returns the keys it had no place for.
func mcpFromEntry(target, name string, canon []byte) (*module.MCPServer, []string) {
	var e map[string]any
	_ = json.Unmarshal(canon, &e)
	s := &module.MCPServer{Name: name, Transport: "stdio"}
	norm := func(v string) string { return module.MapRefs(v, func(x string) string { return "${" + x + "}" }) }
	str := func(k string) string {
		v, _ := e[k].(string)
		delete(e, k)
		return norm(v)
	}
	strs := func(k string) []string {
		var out []string
		if l, ok := e[k].([]any); ok {
			for _, x := range l {
				if s, ok := x.(string); ok {
					out = append(out, norm(s))
				}
			}
		}
		delete(e, k)
		return out
	}
	smap := func(k string) map[string]string {
		var out map[string]string
		if m, ok := e[k].(map[string]any); ok {
			out = map[string]string{}
			for mk, x := range m {
				if s, ok := x.(string); ok {
					out[mk] = norm(s)
				}
			}
		}
		delete(e, k)
		return out
	}
	typ := str("type")
	if u := str("url"); u != "" || typ == "http" || typ == "sse" || typ == "streamable-http" {
		s.Transport, s.URL = "http", u
		s.Headers = smap("headers")
		if target == "codex" {
			s.Headers = smap("http_headers")
			if tok := str("bearer_token_env_var"); tok != "" {
				s.Headers = setHeader(s.Headers, "Authorization", "Bearer ${"+tok+"}")
			}
			for k, v := range smap("env_http_headers") {
				s.Headers = setHeader(s.Headers, k, "${"+v+"}")
			}
		}
	} else {
		s.Command, s.Args, s.Env, s.Cwd = str("command"), strs("args"), smap("env"), str("cwd")
		s.EnvVars = strs("env_vars")
		// A variable passed through as itself is an env_vars entry.
		for k, v := range s.Env {
			if ref, ok := module.OnlyRef(v); ok && ref == k {
				s.EnvVars = append(s.EnvVars, k)
				delete(s.Env, k)
			}
		}
		if len(s.Env) == 0 {
			s.Env = nil
		}
		sort.Strings(s.EnvVars)
		s.EnvVars = slices.Compact(s.EnvVars)
	}
	var dropped []string
	for k := range e {
		dropped = append(dropped, k)
	}
	sort.Strings(dropped)
	return s, dropped
}

func setHeader(m map[string]string, k, v string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[k] = v
	return m
}
