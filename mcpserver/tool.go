package mcpserver

import (
	"context"
	"encoding/json"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/internal/envelope"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Toolsets.
const (
	ToolsetCore      = "core"
	ToolsetResources = "resources"
	ToolsetSources   = "sources"
	// ToolsetPackages holds the package tools (list, verify, install, ...).
	ToolsetPackages = "packages"
	// ToolsetSkills has no tools: it is the Skills extension (skills/list,
	// skills/get, skill:// resources).
	ToolsetSkills = "skills"
)

// Toolsets lists every toolset name --toolsets accepts.
var Toolsets = []string{ToolsetCore, ToolsetPackages, ToolsetSources, ToolsetResources, ToolsetSkills}

// tool is one MCP tool: its definition, its toolset, whether it writes, the
// envelope names it answers with, and the engine call behind it.
type tool struct {
	name        string
	description string
	toolset     string
	write       bool
	// openWorld marks tools that may reach a remote (git fetches).
	openWorld bool
	schema    json.RawMessage
	// command and commandID name the envelope of refusals that happen
	// before run (validation, read-only mode), as the CLI would.
	command   string
	commandID string
	run       func(ctx context.Context, c *call) *envelope.Envelope

	compiled *argSchema
}

// def returns the tool as listed in tools/list.
func (t *tool) def() *mcp.Tool {
	ann := &mcp.ToolAnnotations{ReadOnlyHint: !t.write, OpenWorldHint: ptr(t.openWorld)}
	if t.write {
		ann.DestructiveHint = ptr(true)
	} else {
		ann.IdempotentHint = true
	}
	return &mcp.Tool{Name: t.name, Description: t.description, InputSchema: t.schema, Annotations: ann}
}

func ptr[T any](v T) *T { return &v }

// args is the union of every tool's arguments. Calls are validated against
// the tool's schema (additionalProperties: false) before they are decoded
// into it, so a field a tool does not declare is never set.
type args struct {
	Repo          string   `json:"repo"`
	Profile       string   `json:"profile"`
	Target        string   `json:"target"`
	Machine       string   `json:"machine"`
	DryRun        bool     `json:"dry_run"`
	Diff          bool     `json:"diff"`
	Only          []string `json:"only"`
	Kind          string   `json:"kind"`
	Adopt         bool     `json:"adopt"`
	Force         bool     `json:"force"`
	ConfirmToken  string   `json:"confirm_token"`
	Yes           bool     `json:"yes"`
	To            string   `json:"to"`
	Last          bool     `json:"last"`
	ID            string   `json:"id"`
	Action        string   `json:"action"`
	URI           string   `json:"uri"`
	Query         string   `json:"query"`
	Name          string   `json:"name"`
	Type          string   `json:"type"`
	Source        string   `json:"source"`
	Spec          string   `json:"spec"`
	Ref           string   `json:"ref"`
	Path          string   `json:"path"`
	All           bool     `json:"all"`
	PurgeCache    bool     `json:"purge_cache"`
	Packages      []string `json:"packages"`
	PackageName   string   `json:"package_name"`
	VerifyAll     bool     `json:"verify_all"`
	NoDeploy      bool     `json:"no_deploy"`
	Platform      string   `json:"platform"`
	Limit         int      `json:"limit"`
	PackageType   string   `json:"package_type"`
	Version       string   `json:"version"`
	Registry      string   `json:"registry"`
	Tag           string   `json:"tag"`
	URL           string   `json:"url"`
	Default       bool     `json:"default"`
	Key           string   `json:"key"`
	Value         string   `json:"value"`
	Description   string   `json:"description"`
	ArtifactTypes []string `json:"artifact_types"`
	IncludeAll    bool     `json:"include_all"`
	FromSource    string   `json:"from_source"`
	Artifacts     []string `json:"artifacts"`
	ModuleID      string   `json:"module_id"`
	Scope         string   `json:"scope"`
	Branch        string   `json:"branch"`
}

// call is one validated tool call.
type call struct {
	srv  *Server
	args *args
	// req is the engine request: the call's arguments over the server's
	// defaults.
	req engine.Request
	eng *engine.Engine
}

// allTools returns every tool agentpack serves, in tools/list order.
func allTools() []*tool {
	core := []*tool{
		{name: "plan", toolset: ToolsetCore, schema: planSchema, command: "plan", commandID: "plan", run: runPlan,
			description: "Show what a deploy would change."},
		{name: "diff", toolset: ToolsetCore, schema: diffSchema, command: "diff", commandID: "diff", run: runDiff,
			description: "Show the plan with unified diffs."},
		{name: "preview", toolset: ToolsetCore, schema: previewSchema, command: "preview", commandID: "preview", run: runPreview,
			description: "Show the plan, with diffs if asked."},
		{name: "status", toolset: ToolsetCore, schema: statusSchema, command: "status", commandID: "status", run: runStatus,
			description: "Report drift of deployed files."},
		{name: "doctor", toolset: ToolsetCore, schema: doctorSchema, command: "doctor", commandID: "doctor", run: runDoctor,
			description: "Check the repo, targets and state."},
		{name: "explain", toolset: ToolsetCore, schema: explainSchema, command: "explain", commandID: "explain", run: runExplain,
			description: "Say which module made each planned file."},
		{name: "deploy", toolset: ToolsetCore, schema: deploySchema, command: "deploy", commandID: "deploy", run: runDeploy,
			description: "Plan a deploy and get deploy_apply's confirm_token."},
		{name: "snapshots", toolset: ToolsetCore, schema: snapshotsSchema, command: "snapshots", commandID: "snapshots list", run: runSnapshots,
			description: "List snapshots, or show one."},
		{name: "deploy_apply", toolset: ToolsetCore, write: true, schema: deployApplySchema, command: "deploy", commandID: "deploy --apply", run: runDeployApply,
			description: "Apply a deploy's plan."},
		{name: "rollback", toolset: ToolsetCore, write: true, schema: rollbackSchema, command: "rollback", commandID: "rollback", run: runRollback,
			description: "Roll back to a snapshot."},
		{name: "evolve_propose", toolset: ToolsetCore, write: true, schema: evolveProposeSchema, command: "evolve", commandID: "evolve propose", run: runEvolvePropose,
			description: "Commit hand edits as overlays on a new branch."},
		{name: "evolve_restore", toolset: ToolsetCore, write: true, schema: evolveRestoreSchema, command: "evolve", commandID: "evolve restore", run: runEvolveRestore,
			description: "Recreate missing deployed files."},
		{name: "resources", toolset: ToolsetResources, openWorld: true, schema: resourcesSchema, command: "resources", commandID: "resources", run: runResources,
			description: "List, read or search resources."},
	}
	core = append(core, sourceTools()...)
	return append(core, packageTools()...)
}
