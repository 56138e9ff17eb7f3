package main

import "github.com/agentpack/agentpack/engine/apperr"

// MCPCmd groups `agentpack mcp ...`.
type MCPCmd struct {
	Serve MCPServeCmd `cmd:"" help:"Serve agentpack's tools to IDE agents over MCP (stdio or HTTP)."`
}

// MCPServeCmd is `agentpack mcp serve`.
type MCPServeCmd struct{}

// Run implements the command.
func (c *MCPServeCmd) Run(a *App) error {
	return apperr.New(apperr.Unexpected, "mcp serve is not built yet")
}
