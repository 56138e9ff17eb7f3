package main

import (
	"encoding/json"
	"runtime"
	"sort"
	"strings"

	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/envelope"
	"github.com/agentpack/agentpack/schemas"
	"github.com/agentpack/agentpack/targets"
	"github.com/alecthomas/kong"
)

// mutatingCommands lists the command ids that change files or state; in
// --json mode they need --yes. One table, consulted in one place.
var mutatingCommands = []string{
	"init", "add", "remove", "deploy --apply", "rollback", "snapshots prune", "doctor --fix",
	"import --apply", "lock", "fetch", "update",
	"source add", "source remove", "source update",
	"mcp install", "mcp uninstall",
	"install", "uninstall", "pack", "publish", "registry add", "registry remove", "registry init", "config set", "create-package",
	"overlay edit", "overlay rebase",
}

// dryRunCommands are the mutating commands that honour --dry-run and how;
// every mutating command does, so --dry-run never writes. [recordedDryRun]
// commands run as usual on an engine whose System only records, and report
// what they would write; deploy and import report their plan, which is
// their dry run (a plan is computed on a read-only System).
var dryRunCommands = map[string]dryRunKind{
	"deploy": ownDryRun, "import": ownDryRun, "rollback": recordedDryRun,
	"source add": recordedDryRun, "source remove": recordedDryRun, "source update": recordedDryRun,
	"init": recordedDryRun, "add": recordedDryRun, "remove": recordedDryRun,
	"lock": recordedDryRun, "fetch": recordedDryRun, "update": recordedDryRun,
	"snapshots prune": recordedDryRun, "doctor --fix": recordedDryRun,
	"mcp install": recordedDryRun, "mcp uninstall": recordedDryRun,
	"install": recordedDryRun, "uninstall": recordedDryRun, "pack": recordedDryRun,
	"publish": recordedDryRun, "registry add": recordedDryRun, "registry remove": recordedDryRun, "registry init": recordedDryRun,
	"config set": recordedDryRun, "create-package": recordedDryRun,
	"overlay edit": recordedDryRun, "overlay rebase": recordedDryRun,
}

// dryRunKind is how a command honours --dry-run.
type dryRunKind int

const (
	noDryRun dryRunKind = iota
	ownDryRun
	recordedDryRun
)

// isMutating reports whether commandID changes files or state.
func isMutating(commandID string) bool {
	for _, m := range mutatingCommands {
		if m == commandID {
			return true
		}
	}
	return false
}

// HelpArg describes one flag or positional argument.
type HelpArg struct {
	Name     string `json:"name"`
	Kind     string `json:"kind"`
	Type     string `json:"type"`
	Required bool   `json:"required"`
	Help     string `json:"help"`
}

// HelpCommand describes one command.
type HelpCommand struct {
	ID           string    `json:"id"`
	Path         []string  `json:"path"`
	Mutating     bool      `json:"mutating"`
	SupportsJSON bool      `json:"supports_json"`
	Args         []HelpArg `json:"args"`
}

// HelpCmd is `agentpack help`.
type HelpCmd struct {
	Command []string `arg:"" optional:"" help:"Command to describe."`
}

// Run implements the command.
func (c *HelpCmd) Run(a *App) error {
	if !a.Globals.JSON {
		args := append(append([]string{}, c.Command...), "--help")
		_, err := a.parser.Parse(args)
		return err
	}
	return a.run("help", "help", func() (*result, error) {
		var cmds []HelpCommand
		var walk func(n *kong.Node)
		walk = func(n *kong.Node) {
			for _, child := range n.Children {
				if child.Type != kong.CommandNode {
					continue
				}
				if len(child.Children) > 0 && hasCommandChildren(child) {
					walk(child)
					continue
				}
				path := strings.Fields(child.FullPath())[1:]
				hc := HelpCommand{ID: strings.Join(path, " "), Path: path, SupportsJSON: path[0] != "mcp" && path[0] != "completion", Args: []HelpArg{}}
				for _, pos := range child.Positional {
					hc.Args = append(hc.Args, HelpArg{Name: pos.Name, Kind: "arg", Type: valueType(pos), Required: pos.Required, Help: pos.Help})
				}
				for _, f := range child.Flags {
					hc.Args = append(hc.Args, HelpArg{Name: "--" + f.Name, Kind: "flag", Type: valueType(f.Value), Required: f.Required, Help: f.Help})
				}
				for _, m := range mutatingCommands {
					if m == hc.ID || strings.HasPrefix(m, hc.ID+" --") {
						hc.Mutating = true
					}
				}
				cmds = append(cmds, hc)
			}
		}
		walk(a.parser.Model.Node)
		sort.Slice(cmds, func(i, j int) bool { return cmds[i].ID < cmds[j].ID })
		var globals []HelpArg
		for _, f := range a.parser.Model.Flags {
			if f.Name == "help" {
				continue
			}
			globals = append(globals, HelpArg{Name: "--" + f.Name, Kind: "flag", Type: valueType(f.Value), Required: f.Required, Help: f.Help})
		}
		data := map[string]any{"commands": cmds, "mutating_commands": mutatingCommands, "global_args": globals, "targets": targets.NewSet().Names()}
		return &result{Data: data}, nil
	})
}

func hasCommandChildren(n *kong.Node) bool {
	for _, c := range n.Children {
		if c.Type == kong.CommandNode {
			return true
		}
	}
	return false
}

func valueType(v *kong.Value) string {
	if v.IsBool() {
		return "bool"
	}
	if v.IsSlice() {
		return "list"
	}
	switch v.Target.Kind().String() {
	case "int", "int64":
		return "int"
	}
	return "string"
}

// SchemaCmd is `agentpack schema`.
type SchemaCmd struct{}

// Run implements the command.
func (c *SchemaCmd) Run(a *App) error {
	return a.run("schema", "schema", func() (*result, error) {
		cmds := map[string]json.RawMessage{}
		for _, n := range schemas.CommandNames() {
			s, _ := schemas.Command(n)
			cmds[n] = s
		}
		data := map[string]any{"envelope": schemas.Envelope(), "commands": cmds}
		return &result{Data: data, Human: func(p *Printer) {
			b, _ := json.MarshalIndent(data, "", "  ")
			p.Printf("%s\n", b)
		}}, nil
	})
}

// VersionCmd is `agentpack version`.
type VersionCmd struct{}

// Run implements the command.
func (c *VersionCmd) Run(a *App) error {
	return a.run("version", "version", func() (*result, error) {
		data := map[string]any{"version": envelope.Version, "go_version": runtime.Version(), "targets": targets.NewSet().Names()}
		return &result{Data: data, Human: func(p *Printer) { p.Printf("agentpack %s\n", envelope.Version) }}, nil
	})
}

// CompletionCmd is `agentpack completion`.
type CompletionCmd struct {
	Shell string `arg:"" enum:"bash,zsh,fish,powershell" help:"bash, zsh, fish or powershell."`
}

// Help implements kong.HelpProvider: `completion --help` says how to
// install the script in each shell.
func (c *CompletionCmd) Help() string { return completionInstall }

// Run implements the command.
func (c *CompletionCmd) Run(a *App) error {
	return a.run("completion", "completion", func() (*result, error) {
		script, err := completionScript(c.Shell)
		if err != nil {
			return nil, err
		}
		return &result{Data: map[string]any{"shell": c.Shell, "script": script}, Human: func(p *Printer) { p.Printf("%s", script) }}, nil
	})
}

var errUnknownShell = apperr.New(apperr.InvalidArgument, "unknown shell").WithHint("use bash, zsh, fish or powershell")
