package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	"github.com/agentpack/agentpack/engine/mcpcheck"
	"github.com/agentpack/agentpack/engine/module"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/cfgedit"
	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/agentpack/agentpack/internal/workers"
)

// MCPServerCheck is what `doctor --mcp` found for one MCP server.
type MCPServerCheck struct {
	// Client is the client whose file defines the server, or "desired" for
	// an mcp module of the desired state.
	Client    string `json:"client"`
	Scope     string `json:"scope,omitempty"`
	Path      string `json:"path,omitempty"`
	PathPosix string `json:"path_posix,omitempty"`
	ModuleID  string `json:"module_id,omitempty"`
	Name      string `json:"name"`
	Transport string `json:"transport"`
	mcpcheck.Result
}

// DoctorMCPOptions are the knobs of `doctor --mcp`.
type DoctorMCPOptions struct {
	// Timeout bounds each server's check (default 10s).
	Timeout time.Duration
	// Version is reported to the servers as the client's version.
	Version string
	// LookupEnv resolves ${VAR} (the process environment when nil).
	LookupEnv func(string) (string, bool)
}

// DoctorMCP starts or connects to every MCP server the desired state (its
// mcp modules) and each client's config file define, runs initialize and
// tools/list with a timeout, and reports per client and server: ok with
// the tool count, or failed with the reason (command not found, missing
// env var, bad URL, handshake error). It writes nothing.
func (e *Engine) DoctorMCP(ctx context.Context, req Request, opt DoctorMCPOptions) (*DoctorData, []string, error) {
	var warnings []string
	var servers []MCPServerCheck
	var defs []*module.MCPServer
	if st, err := e.Load(ctx, req); err != nil {
		warnings = append(warnings, fmt.Sprintf("the desired state was not loaded (%s); checking the client files only", apperr.As(err).Message))
	} else {
		warnings = append(warnings, st.Warnings...)
		for _, lm := range st.Modules {
			if lm.MCP != nil {
				servers = append(servers, MCPServerCheck{Client: "desired", ModuleID: lm.ID, Name: lm.MCP.Name, Transport: lm.MCP.Transport})
				defs = append(defs, lm.MCP)
			}
		}
	}
	m, _, _ := e.LoadManifest(ctx, req)
	codexHome := e.codexHomeFor(m)
	for _, sp := range mcpImportSpots(e.Env.Home, codexHome, e.projectRoot().String()) {
		p := filepath.Join(sp.dir, sp.file)
		data, err := e.Sys.ReadFile(fsys.AbsPath(p))
		if err != nil {
			continue
		}
		format, container := mcpFormat(sp.target)
		names, err := cfgedit.Names(format, data, container)
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("%s does not parse (%v): its servers are not checked", p, err))
			continue
		}
		for _, name := range names {
			canon, _ := cfgedit.Get(format, data, container, name)
			s, _ := mcpFromEntry(sp.target, name, canon)
			servers = append(servers, MCPServerCheck{Client: sp.target, Scope: sp.scope, Path: p, PathPosix: filepath.ToSlash(p), Name: name, Transport: s.Transport})
			defs = append(defs, s)
		}
	}
	// The same definition is started once, whichever files hold it.
	results := map[string]*mcpcheck.Result{}
	var keys []string
	var uniq []*module.MCPServer
	for _, s := range defs {
		k := defKey(s)
		if _, ok := results[k]; !ok {
			results[k] = &mcpcheck.Result{}
			keys = append(keys, k)
			uniq = append(uniq, s)
		}
	}
	workers.Parallel(len(uniq), func(i int) {
		s := uniq[i]
		if err := s.Validate(); err != nil {
			*results[keys[i]] = mcpcheck.Result{Status: mcpcheck.Failed, Reason: "invalid definition: " + err.Error()}
			return
		}
		*results[keys[i]] = mcpcheck.Check(ctx, s, mcpcheck.Options{Timeout: opt.Timeout, LookupEnv: opt.LookupEnv, Version: opt.Version})
	})
	d := &DoctorData{Checks: []DoctorCheck{}, Summary: map[string]int{CheckPass: 0, CheckWarn: 0, CheckFail: 0}, MCPServers: []MCPServerCheck{}}
	for i := range servers {
		servers[i].Result = *results[defKey(defs[i])]
		s := servers[i]
		where := s.Client
		if s.Path != "" {
			where += " " + s.Path
		} else if s.ModuleID != "" {
			where += " " + s.ModuleID
		}
		if s.Status == mcpcheck.OK {
			d.Checks = append(d.Checks, DoctorCheck{Name: "mcp:" + s.Client + ":" + s.Name, Status: CheckPass, Message: fmt.Sprintf("%s: %s answers with %d tool(s)", where, s.Name, s.Tools), Suggestion: ""})
		} else {
			d.Checks = append(d.Checks, DoctorCheck{Name: "mcp:" + s.Client + ":" + s.Name, Status: CheckFail, Message: fmt.Sprintf("%s: %s failed: %s", where, s.Name, s.Reason), Suggestion: "fix the server definition (or the environment it needs), then run `agentpack doctor --mcp` again"})
		}
	}
	d.MCPServers = servers
	for _, c := range d.Checks {
		d.Summary[c.Status]++
	}
	d.Healthy = d.Summary[CheckFail] == 0
	return d, warnings, nil
}

func defKey(s *module.MCPServer) string {
	b, _ := json.Marshal(s)
	return string(b)
}
