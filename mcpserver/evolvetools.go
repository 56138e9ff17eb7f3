package mcpserver

import (
	"context"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/internal/envelope"
)

var pModuleID = str("module_id", "Only this module.")

// The input schemas of the evolve tools.
var (
	evolveProposeSchema = objectSchema([]prop{pRepo, pProfile, pTarget, pMachine, pModuleID,
		enum("scope", "global", "machine", "project"), str("branch", ""), pDryRun, pYes}, "yes")
	evolveRestoreSchema = objectSchema([]prop{pRepo, pProfile, pTarget, pMachine, pModuleID, pYes}, "yes")
)

// runEvolvePropose is `evolve propose --yes`; the engine takes the
// cross-process lock.
func runEvolvePropose(ctx context.Context, c *call) *envelope.Envelope {
	d, err := c.eng.EvolvePropose(ctx, engine.EvolveProposeRequest{Request: c.req, ModuleID: c.args.ModuleID,
		Scope: c.args.Scope, Branch: c.args.Branch, DryRun: c.args.DryRun})
	var warnings []string
	if d != nil {
		warnings = d.Warnings
	}
	return finish(envelope.New("evolve", "evolve propose"), d, warnings, err)
}

// runEvolveRestore is `evolve restore --yes`.
func runEvolveRestore(ctx context.Context, c *call) *envelope.Envelope {
	d, err := c.eng.EvolveRestore(ctx, engine.EvolveRestoreRequest{Request: c.req, ModuleID: c.args.ModuleID})
	var warnings []string
	if d != nil {
		warnings = d.Warnings
	}
	return finish(envelope.New("evolve", "evolve restore"), d, warnings, err)
}
