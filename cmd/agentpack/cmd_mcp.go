package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/engine/apperr"
	"github.com/agentpack/agentpack/mcpserver"
)

// MCPCmd groups `agentpack mcp ...`.
type MCPCmd struct {
	Serve MCPServeCmd `cmd:"" help:"Serve agentpack's tools to IDE agents over MCP (stdio or HTTP)."`
}

// MCPServeCmd is `agentpack mcp serve`. The global --repo, --profile,
// --target and --machine become the defaults of every tool call.
type MCPServeCmd struct {
	Transport  string   `enum:"stdio,http" default:"stdio" help:"stdio (newline-delimited JSON-RPC) or http (streamable HTTP at /mcp)."`
	Host       string   `default:"127.0.0.1" help:"HTTP listen address."`
	Port       int      `default:"9000" help:"HTTP listen port (0: any free port, printed on stderr)."`
	AllowWrite bool     `name:"allow-write" help:"List and enable the write tools (deploy_apply, rollback)."`
	Toolsets   []string `sep:"," placeholder:"core,resources" help:"Tool groups to serve: core, resources (packages, sources reserved); default all."`
	LogFile    string   `name:"log-file" type:"path" help:"Write logs to this file instead of stderr."`
	LogLevel   string   `name:"log-level" enum:"debug,info,warn,error" default:"info" help:"Log level: debug, info, warn, error."`
}

// Run implements the command. stdout carries only JSON-RPC; logs go to
// stderr or --log-file. SIGINT/SIGTERM finish the calls in flight, then
// exit 0.
func (c *MCPServeCmd) Run(a *App) error {
	logger, closeLog, err := c.logger(a.Stderr)
	if err != nil {
		return err
	}
	defer closeLog()
	srv, err := mcpserver.New(mcpserver.Options{
		Env:        a.Env,
		NewEngine:  a.newEngine,
		Defaults:   a.Request(),
		AllowWrite: c.AllowWrite,
		Toolsets:   c.Toolsets,
		Logger:     logger,
	})
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger.Info("agentpack mcp serve", "version", engine.Version, "transport", c.Transport, "allow_write", c.AllowWrite, "tools", srv.ListedTools())
	if c.Transport == "stdio" {
		return srv.ServeStdio(ctx, a.Stdin, a.Stdout)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(c.Host, strconv.Itoa(c.Port)))
	if err != nil {
		return apperr.Wrap(err, apperr.InvalidArgument, "cannot listen on %s:%d", c.Host, c.Port).
			WithHint("pick another --port, or stop the process using it")
	}
	token := os.Getenv("AGENTPACK_MCP_TOKEN")
	if ip := net.ParseIP(c.Host); (ip == nil || !ip.IsLoopback()) && token == "" {
		logger.Warn("listening on a non-loopback address without AGENTPACK_MCP_TOKEN: anyone who can reach it can call the tools", "host", c.Host)
	}
	// One parseable line, so scripts and tests can find a --port 0 server.
	fmt.Fprintf(a.Stderr, "agentpack mcp: listening on http://%s/mcp\n", ln.Addr())
	return srv.ServeHTTP(ctx, ln, mcpserver.HTTPOptions{BearerToken: token})
}

func (c *MCPServeCmd) logger(stderr io.Writer) (*slog.Logger, func(), error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.LogLevel)); err != nil {
		return nil, nil, apperr.New(apperr.InvalidArgument, "unknown --log-level %q", c.LogLevel).WithHint("use debug, info, warn or error")
	}
	w, closeFn := stderr, func() {}
	if c.LogFile != "" {
		f, err := os.OpenFile(c.LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return nil, nil, apperr.Wrap(err, apperr.IOFailed, "cannot open --log-file %s", c.LogFile)
		}
		w, closeFn = f, func() { _ = f.Close() }
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level})), closeFn, nil
}
