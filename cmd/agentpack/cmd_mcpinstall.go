package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/internal/apperr"
)

// MCPInstallCmd is `agentpack mcp install`.
type MCPInstallCmd struct {
	Client     string `required:"" enum:"codex,claude_code,cursor,vscode" help:"Client whose config gets the entry: codex, claude_code, cursor, vscode."`
	Scope      string `enum:",user,project" default:"" help:"user or project (default: user for codex and claude_code, project for cursor and vscode)."`
	Name       string `default:"agentpack" help:"Name of the server entry."`
	AllowWrite bool   `name:"allow-write" help:"Start the server with --allow-write (the write tools)."`
}

// MCPUninstallCmd is `agentpack mcp uninstall`.
type MCPUninstallCmd struct {
	Client string `required:"" enum:"codex,claude_code,cursor,vscode" help:"Client whose config loses the entry."`
	Scope  string `enum:",user,project" default:"" help:"user or project (default as for install)."`
	Name   string `default:"agentpack" help:"Name of the server entry."`
}

// Run implements the command.
func (c *MCPInstallCmd) Run(a *App) error {
	bin, err := os.Executable()
	if err == nil {
		bin, err = filepath.Abs(bin)
	}
	args := []string{"mcp", "serve"}
	if c.AllowWrite {
		args = append(args, "--allow-write")
	}
	if a.Globals.Repo != "" {
		args = append(args, "--repo", a.Env.ResolveRepo(a.Globals.Repo))
	}
	opt := engine.MCPInstallOptions{Client: c.Client, Scope: c.Scope, Name: c.Name, Command: bin, Args: args}
	return runMCPInstall(a, "mcp install", opt, err)
}

// Run implements the command.
func (c *MCPUninstallCmd) Run(a *App) error {
	return runMCPInstall(a, "mcp uninstall", engine.MCPInstallOptions{Client: c.Client, Scope: c.Scope, Name: c.Name, Uninstall: true}, nil)
}

func runMCPInstall(a *App, id string, opt engine.MCPInstallOptions, binErr error) error {
	return a.run("mcp", id, func() (*result, error) {
		if binErr != nil {
			return nil, apperr.Wrap(binErr, apperr.Unexpected, "cannot find the path of the running agentpack binary")
		}
		if err := a.requireYesInJSON(id); err != nil {
			return nil, err
		}
		eng, preview := a.dryRunEngine()
		if preview == nil && !a.Globals.Yes {
			// Show the entry diff, then ask (a terminal) or refuse (no --yes).
			look, _, err := a.recordingEngine().MCPInstall(a.Ctx(), opt)
			if err != nil {
				return nil, err
			}
			if len(look.Changes) > 0 {
				for _, e := range look.Changes[0].Entries {
					fmt.Fprint(a.Stderr, e.Unified)
				}
				if err := a.confirm(id, fmt.Sprintf("Edit the %q entry of %s?", opt.Name, look.Path)); err != nil {
					return nil, err
				}
			}
		}
		d, warnings, err := eng.MCPInstall(a.Ctx(), opt)
		if err != nil {
			return &result{Warnings: warnings}, err
		}
		if preview != nil {
			r := preview(d, nil)
			r.Warnings = warnings
			return r, nil
		}
		return &result{Data: d, Warnings: warnings, Human: func(p *Printer) {
			switch d.Action {
			case "unchanged":
				p.Printf("%s already says what was asked: nothing to do\n", p.Path(d.Path.String()))
			default:
				p.Printf("%s %q in %s (snapshot %s; undo with: agentpack rollback --last)\n", d.Action, d.Name, p.Path(d.Path.String()), p.bold(d.SnapshotID))
			}
		}}, nil
	})
}
