package main

import (
	"context"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/mcpserver"
	"github.com/agentpack/agentpack/targets"
)

// slot is a kind of value that completion offers beyond a flag's enum.
type slot int

const (
	slotModule       slot = iota + 1 // a module id of the manifest
	slotSnapshot                     // a snapshot id, or "last"
	slotProfile                      // a profile of the manifest
	slotTarget                       // a configured target, or "all"
	slotTargetName                   // a configured target
	slotTag                          // a tag used by a module or a profile
	slotSource                       // an artifact source's name
	slotArtifactType                 // an artifact type of `source scan`
	slotDriftKind                    // a drift kind of `status --only`
	slotToolset                      // an MCP tool group
	slotCommand                      // a command path (`help <command>`)
)

// completionSlots says which flag or positional argument takes which kind of
// value, keyed as [slotKey] names them. Enums (`completion <shell>`, `add
// <type>`, `explain <kind>`) come from the model and need no entry.
var completionSlots = map[string]slot{
	"--profile":                  slotProfile,
	"--target":                   slotTarget,
	"add --targets":              slotTargetName,
	"add --tags":                 slotTag,
	"remove <id>":                slotModule,
	"overlay edit <module_id>":   slotModule,
	"overlay path <module_id>":   slotModule,
	"overlay rebase <module_id>": slotModule,
	"rollback --to":              slotSnapshot,
	"snapshots show <id>":        slotSnapshot,
	"source scan <name>":         slotSource,
	"source diff <name>":         slotSource,
	"source update <name>":       slotSource,
	"source remove <name>":       slotSource,
	"source candidates --source": slotSource,
	"source scan --type":         slotArtifactType,
	"source candidates --type":   slotArtifactType,
	"status --only":              slotDriftKind,
	"mcp serve --toolsets":       slotToolset,
	"help <command>":             slotCommand,
}

// completionValues reads the values of a slot for the repo named by --repo
// ("" for the default). It only reads: it parses agentpack.yaml and lists
// the snapshot records, and takes no lock and recovers nothing (unlike
// [engine.Engine.Snapshots] or [engine.Engine.Load], which first roll back
// an interrupted apply). Any error means no values: completion never fails
// loudly.
type completionValues struct {
	env  engine.Env
	repo string
}

// of returns the values of s, unsorted.
func (v completionValues) of(s slot) []string {
	switch s {
	case slotArtifactType:
		var out []string
		for _, t := range engine.ArtifactTypes {
			out = append(out, string(t))
		}
		return out
	case slotDriftKind:
		return engine.DriftKinds
	case slotToolset:
		return mcpserver.Toolsets
	case slotSnapshot:
		return v.snapshotIDs()
	}
	eng := engine.New(v.env, targets.NewSet())
	m, _, err := eng.LoadManifest(context.Background(), engine.Request{Repo: v.repo})
	if err != nil || m == nil {
		if s == slotTarget || s == slotTargetName {
			return append(eng.Adapters.Names(), targetAll(s)...)
		}
		return nil
	}
	var out []string
	switch s {
	case slotModule:
		for _, mod := range m.Modules {
			out = append(out, mod.ID)
		}
	case slotProfile:
		for name := range m.Profiles {
			out = append(out, name)
		}
	case slotTarget, slotTargetName:
		out = append(m.TargetNames(), targetAll(s)...)
	case slotTag:
		for _, mod := range m.Modules {
			out = append(out, mod.Tags...)
		}
		for _, p := range m.Profiles {
			out = append(out, p.IncludeTags...)
		}
	case slotSource:
		for _, src := range m.Sources {
			out = append(out, src.Name)
		}
	}
	return out
}

func targetAll(s slot) []string {
	if s == slotTarget {
		return []string{"all"}
	}
	return nil
}

// snapshotIDs lists the readable snapshot records' ids and, when there is
// one, "last" (which rollback --to and snapshots show accept).
func (v completionValues) snapshotIDs() []string {
	records, _, err := engine.New(v.env, targets.NewSet()).Store().List()
	if err != nil || len(records) == 0 {
		return nil
	}
	out := make([]string, 0, len(records)+1)
	for _, r := range records {
		out = append(out, r.ID)
	}
	return append(out, "last")
}
