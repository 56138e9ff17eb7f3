package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/envelope"
)

// DoctorCmd is `agentpack doctor`.
type DoctorCmd struct {
	Fix        bool          `help:"Repair what can be repaired safely (interrupted apply, .gitignore lines)."`
	MCP        bool          `name:"mcp" help:"Start (or connect to) every MCP server the desired state and the clients' config files define, and report the handshake and tool count of each; writes nothing."`
	MCPTimeout time.Duration `name:"mcp-timeout" default:"10s" help:"Time each MCP server gets to answer (with --mcp)."`
}

// Run implements the command.
func (c *DoctorCmd) Run(a *App) error {
	id := "doctor"
	if c.Fix {
		id = "doctor --fix"
	}
	if c.MCP {
		return c.runMCP(a)
	}
	return a.run("doctor", id, func() (*result, error) {
		if c.Fix {
			if err := a.confirm(id, "Let doctor fix what it can (.gitignore lines, an interrupted apply)?"); err != nil {
				return nil, err
			}
		}
		d, warnings, err := a.Engine().Doctor(a.Ctx(), a.Request(), c.Fix)
		if err != nil {
			return &result{Warnings: warnings}, err
		}
		return &result{Data: d, Warnings: warnings, Human: func(p *Printer) {
			okRoots := 0
			for _, ch := range d.Checks {
				if strings.HasPrefix(ch.Name, "root:") && ch.Status == "pass" {
					okRoots++ // one line for all healthy roots; --json lists each
					continue
				}
				mark := map[string]string{"pass": p.green("ok  "), "warn": p.yellow("warn"), "fail": p.red("FAIL")}[ch.Status]
				p.Printf("%s  %s: %s\n", mark, ch.Name, ch.Message)
				if ch.Suggestion != "" && ch.Status != "pass" {
					p.Printf("      %s %s\n", p.dim("→"), ch.Suggestion)
				}
			}
			if okRoots > 0 {
				p.Printf("%s  roots: %d target folder(s) writable or creatable\n", p.green("ok  "), okRoots)
			}
			for _, f := range d.Fixed {
				p.Printf("%s %s\n", p.green("fixed:"), f)
			}
			if d.Healthy {
				p.Printf("Healthy.\n")
			} else {
				p.Printf("%d check(s) failed.\n", d.Summary["fail"])
			}
		}}, nil
	})
}

// runMCP is `doctor --mcp`.
func (c *DoctorCmd) runMCP(a *App) error {
	return a.run("doctor", "doctor --mcp", func() (*result, error) {
		if c.Fix {
			return nil, apperr.New(apperr.InvalidArgument, "--mcp and --fix do not go together").WithHint("run them one after the other")
		}
		d, warnings, err := a.Engine().DoctorMCP(a.Ctx(), a.Request(), engine.DoctorMCPOptions{Timeout: c.MCPTimeout, Version: envelope.Version})
		if err != nil {
			return &result{Warnings: warnings}, err
		}
		return &result{Data: d, Warnings: warnings, Human: func(p *Printer) {
			if len(d.MCPServers) == 0 {
				p.Printf("No MCP servers defined in the desired state or the clients' config files.\n")
				return
			}
			for _, s := range d.MCPServers {
				where := s.Path
				if where == "" {
					where = s.ModuleID
				}
				if s.Status == "ok" {
					p.Printf("%s  %s %s (%s): %d tool(s)\n", p.green("ok  "), s.Client, s.Name, p.Path(where), s.Tools)
				} else {
					p.Printf("%s  %s %s (%s): %s\n", p.red("FAIL"), s.Client, s.Name, p.Path(where), s.Reason)
				}
			}
			if d.Healthy {
				p.Printf("Every MCP server answers.\n")
			} else {
				p.Printf("%d MCP server check(s) failed.\n", d.Summary["fail"])
			}
		}}, nil
	})
}

// ExplainCmd is `agentpack explain`.
type ExplainCmd struct {
	Kind string `arg:"" enum:"plan,diff,status" help:"plan, diff or status."`
}

// Run implements the command.
func (c *ExplainCmd) Run(a *App) error {
	return a.run("explain", "explain "+c.Kind, func() (*result, error) {
		st, d, err := a.Engine().Explain(a.Ctx(), a.Request(), c.Kind)
		if err != nil {
			return warningsOf(st), err
		}
		return &result{Data: d, Warnings: st.Warnings, Human: func(p *Printer) {
			if len(d.Items) == 0 {
				p.Printf("Nothing to explain: no changes.\n")
			}
			for _, it := range d.Items {
				what := it.Op + it.Kind
				p.Printf("%s %-8s %s\n", p.bold(fmt.Sprintf("%-11s", it.Target)), what, p.Path(it.Path.String()))
				for _, m := range it.Modules {
					p.Printf("    ← %s (%s) from %s\n", m.ID, m.Type, m.Source)
				}
			}
		}}, nil
	})
}
