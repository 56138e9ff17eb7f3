package main

import "github.com/agentpack/agentpack/engine/apperr"

// SourceCmd groups `agentpack source ...` (artifact sources, SPEC §10).
type SourceCmd struct {
	List SourceListCmd `cmd:"" help:"List registered artifact sources."`
}

// SourceListCmd is `agentpack source list`.
type SourceListCmd struct{}

// Run implements the command.
func (c *SourceListCmd) Run(a *App) error {
	return apperr.New(apperr.Unexpected, "source commands are not built yet")
}
