package main

import "github.com/alecthomas/kong"

// Globals are the flags every command accepts (SPEC §5).
type Globals struct {
	Repo    string `help:"Desired-state repo (default $AGENTPACK_HOME/repo)." placeholder:"DIR" type:"path"`
	Profile string `help:"Profile to use." default:"default"`
	Target  string `help:"Target name or 'all'." default:"all"`
	Machine string `help:"Machine id for machine-specific state."`
	// AllowHomeProject lets project-scope files go into $HOME.
	AllowHomeProject bool `name:"allow-home-project" help:"Allow project files when the project folder is your home folder."`
	JSON             bool `name:"json" help:"Print one JSON envelope on stdout."`
	Yes              bool `help:"Confirm mutations without asking."`
	DryRun           bool `name:"dry-run" help:"Show what would change; write nothing."`
	NoColor          bool `name:"no-color" help:"Disable colours (also NO_COLOR)."`
	Quiet            bool `short:"q" help:"Print less."`
	Verbose          bool `short:"v" help:"Print more."`
}

// CLI is the kong command tree.
type CLI struct {
	Globals
	VersionFlag kong.VersionFlag `name:"version" help:"Print agentpack's version and exit."`

	Init       InitCmd          `cmd:"" help:"Create a desired-state repo with an example of every module type."`
	Add        AddCmd           `cmd:"" help:"Add a module to agentpack.yaml."`
	Remove     RemoveCmd        `cmd:"" help:"Remove a module from agentpack.yaml."`
	Import     ImportCmd        `cmd:"" help:"Turn assets already on disk into modules (dry run unless --apply)."`
	Source     SourceCmd        `cmd:"" help:"Manage artifact sources: git repos of skills, prompts and agents."`
	Lock       LockCmd          `cmd:"" help:"Pin every module's source (git commits, file hashes) in agentpack.lock.json."`
	Fetch      FetchCmd         `cmd:"" help:"Fetch the pinned git checkouts into the cache and verify them."`
	Update     UpdateCmd        `cmd:"" help:"Re-resolve sources (lock) and fetch them."`
	Plan       PlanCmd          `cmd:"" help:"Show which files would be created, updated or deleted."`
	Diff       DiffCmd          `cmd:"" help:"Show unified diffs of the plan."`
	Preview    PreviewCmd       `cmd:"" help:"Show the plan, and with --diff its diffs."`
	Deploy     DeployCmd        `cmd:"" help:"Show the plan; with --apply, apply it with a snapshot."`
	Status     StatusCmd        `cmd:"" help:"Show drift between desired, actual and last applied."`
	Rollback   RollbackCmd      `cmd:"" help:"Restore the files of an earlier snapshot."`
	Snapshots  SnapshotsCmd     `cmd:"" help:"List, show or prune snapshots."`
	Overlay    OverlayCmd       `cmd:"" help:"Customise a module without forking it: overlays (global, machine, project)."`
	Explain    ExplainCmd       `cmd:"" help:"Show which module and source produced each file."`
	Doctor     DoctorCmd        `cmd:"" help:"Check that agentpack can work here; --fix repairs what it safely can."`
	Install    InstallCmd       `cmd:"" help:"Install packages (resolving their dependencies) into agentpack.yaml and deploy them."`
	Uninstall  UninstallCmd     `cmd:"" help:"Uninstall a package and the dependencies nothing else needs, and deploy the deletions."`
	List       ListCmd          `cmd:"" help:"List the installed packages."`
	Outdated   OutdatedCmd      `cmd:"" help:"List installed packages with newer versions in their registry."`
	Verify     VerifyCmd        `cmd:"" help:"Check installed packages' deployed files and cache against what agentpack wrote and locked."`
	Validate   ValidateCmd      `cmd:"" help:"Check a package folder's aam.yaml and artifacts, reporting every problem at once."`
	Pack       PackCmd          `cmd:"" help:"Build a package folder's deterministic .aam archive."`
	CreatePkg  CreatePackageCmd `cmd:"" name:"create-package" help:"Turn the skills, prompts, agents, instructions and commands in a folder into a package (aam.yaml)."`
	Publish    PublishCmd       `cmd:"" help:"Publish a package folder or .aam file to a registry."`
	Registry   RegistryCmd      `cmd:"" help:"Manage package registries: list, add, remove, init."`
	Search     SearchCmd        `cmd:"" help:"Search the registries for packages."`
	Info       InfoCmd          `cmd:"" help:"Show a package's versions, artifacts and dependencies."`
	Config     ConfigCmd        `cmd:"" help:"Show and change settings in config.toml."`
	MCP        MCPCmd           `cmd:"" name:"mcp" help:"Model Context Protocol server for IDE agents."`
	Help       HelpCmd          `cmd:"" help:"Describe the commands (use --json for machines)."`
	Schema     SchemaCmd        `cmd:"" help:"Print the JSON Schemas of the envelope and each command's data."`
	Completion CompletionCmd    `cmd:"" help:"Print a shell completion script."`
	Version    VersionCmd       `cmd:"" help:"Print agentpack's version."`
}
