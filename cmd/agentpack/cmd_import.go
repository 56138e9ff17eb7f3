package main

import "github.com/agentpack/agentpack/engine/apperr"

// ImportCmd is `agentpack import`.
type ImportCmd struct {
	Apply bool `help:"Write the modules (default: dry run)."`
}

// Run implements the command.
func (c *ImportCmd) Run(a *App) error {
	return apperr.New(apperr.Unexpected, "import is not built yet")
}
