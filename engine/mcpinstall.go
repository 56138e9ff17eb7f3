package engine

import (
	"context"
	"strings"

	"github.com/agentpack/agentpack/engine/apply"
	"github.com/agentpack/agentpack/engine/desired"
	"github.com/agentpack/agentpack/engine/module"
	"github.com/agentpack/agentpack/engine/plan"
	"github.com/agentpack/agentpack/engine/target"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
)

// MCPInstallOptions are the flags of `mcp install` and `mcp uninstall`.
type MCPInstallOptions struct {
	// Client is a target name: codex, claude_code, cursor or vscode.
	Client string
	// Scope is user or project; "" picks the client's default (user for
	// codex and claude_code, project for cursor and vscode).
	Scope string
	// Name is the server's name in the client's config (default agentpack).
	Name string
	// Command and Args start agentpack's MCP server (install only).
	Command string
	Args    []string
	// Uninstall removes the entry instead.
	Uninstall bool
}

// MCPInstallData is the data of `mcp install` and `mcp uninstall`.
type MCPInstallData struct {
	Client    string       `json:"client"`
	Scope     string       `json:"scope"`
	Name      string       `json:"name"`
	Path      fsys.AbsPath `json:"path"`
	PathPosix string       `json:"path_posix"`
	// Action is installed, updated, uninstalled or unchanged.
	Action     string        `json:"action"`
	Applied    bool          `json:"applied"`
	SnapshotID string        `json:"snapshot_id,omitempty"`
	Changes    []plan.Change `json:"changes"`
}

// defaultMCPScope is where each client's own MCP file is by default.
func defaultMCPScope(client string) target.Scope {
	if client == "cursor" || client == "vscode" {
		return target.ScopeProject
	}
	return target.ScopeUser
}

// MCPInstall registers (or with opt.Uninstall removes) agentpack's own MCP
// server in a client's config file, through the same key-level edit and
// apply transaction as a deploy: only that entry changes, the previous file
// is kept in a snapshot (`rollback --last` undoes it), and running it twice
// changes nothing. The entry is not recorded in a target manifest: it is
// not a module, and a deploy leaves it alone.
func (e *Engine) MCPInstall(ctx context.Context, opt MCPInstallOptions) (*MCPInstallData, []string, error) {
	f, scope, warnings, err := e.mcpInstallFile(opt)
	if err != nil {
		return nil, warnings, err
	}
	out := &MCPInstallData{Client: opt.Client, Scope: string(scope), Name: opt.Name, Path: f.Path, PathPosix: f.Path.ToSlash(), Action: "unchanged", Changes: []plan.Change{}}
	command := "mcp install"
	if opt.Uninstall {
		command = "mcp uninstall"
	}
	err = e.WithLock(ctx, command, func(recovered []string) error {
		warnings = append(warnings, recovered...)
		c, err := plan.EntryEdit(e.Sys, opt.Client, f.Path.Dir(), f, opt.Uninstall)
		if err != nil || c == nil {
			return err
		}
		out.Changes = []plan.Change{*c}
		switch {
		case opt.Uninstall:
			out.Action = "uninstalled"
		case c.Entries[0].Op == plan.OpCreate:
			out.Action = "installed"
		default:
			out.Action = "updated"
		}
		p := &plan.Plan{Targets: []string{opt.Client}, Changes: out.Changes, Manifests: map[desired.Root]*plan.TargetManifest{}}
		p.Summary.Create, p.Summary.Update, p.Summary.Delete = count(c.Op, plan.OpCreate), count(c.Op, plan.OpUpdate), count(c.Op, plan.OpDelete)
		id, applied, err := e.writer().Apply(apply.Deployment{Desired: &desired.State{}, Plan: p, Command: command,
			Project: e.projectRoot().String(), Targets: []string{opt.Client}})
		out.Applied, out.SnapshotID = applied, id
		return err
	})
	return out, warnings, err
}

func count(op, want string) int {
	if op == want {
		return 1
	}
	return 0
}

// mcpInstallFile renders the entry with the client's own adapter, so it has
// exactly the shape a deploy of an mcp module would give it.
func (e *Engine) mcpInstallFile(opt MCPInstallOptions) (target.DesiredFile, target.Scope, []string, error) {
	var warnings []string
	ad, err := e.Adapters.Lookup(opt.Client)
	if err != nil {
		return target.DesiredFile{}, "", nil, err
	}
	scope := target.Scope(opt.Scope)
	switch scope {
	case "":
		scope = defaultMCPScope(opt.Client)
	case target.ScopeUser, target.ScopeProject:
	default:
		return target.DesiredFile{}, "", nil, apperr.New(apperr.InvalidArgument, "--scope must be user or project, not %q", opt.Scope).
			WithHint("pass --scope user or --scope project")
	}
	if opt.Name == "" {
		opt.Name = "agentpack"
	}
	srv := &module.MCPServer{Name: opt.Name, Transport: "stdio", Command: opt.Command, Args: opt.Args}
	if opt.Uninstall && srv.Command == "" {
		srv.Command = "agentpack" // only the entry's place matters
	}
	if err := srv.Validate(); err != nil {
		return target.DesiredFile{}, "", nil, apperr.New(apperr.InvalidArgument, "%s", err.Error()).WithHint("pass --name with letters, digits, '_' or '-'")
	}
	rc := &target.RenderContext{Target: opt.Client, Config: target.Config{Scope: scope}, Scope: scope,
		Home: abs(e.Env.Home), CodexHome: e.Env.CodexHome, ProjectRoot: e.projectRoot(), FS: e.Sys,
		OnWarn: func(w string) { warnings = append(warnings, w) }}
	lm := &module.LoadedModule{Module: &module.Module{ID: "mcp:" + opt.Name, Type: module.TypeMCP}, MCP: srv}
	out, err := ad.Render(rc, []*module.LoadedModule{lm})
	if err != nil {
		return target.DesiredFile{}, "", warnings, err
	}
	for _, f := range out.Files {
		if f.Keyed != nil {
			return f, scope, warnings, nil
		}
	}
	return target.DesiredFile{}, "", warnings, apperr.New(apperr.TargetUnsupported, "%s has no %s-scope MCP config file agentpack writes", opt.Client, scope).
		WithHint("use --scope %s", otherScope(scope)).With("client", opt.Client).With("scope", string(scope))
}

func otherScope(s target.Scope) string {
	if s == target.ScopeUser {
		return string(target.ScopeProject)
	}
	return strings.ToLower(string(target.ScopeUser))
}
