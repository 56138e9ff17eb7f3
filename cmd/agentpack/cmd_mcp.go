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
	"strings"
	"syscall"

	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/envelope"
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
	Host       string   `default:"127.0.0.1" help:"HTTP listen address (not loopback: --allow-write needs AGENTPACK_MCP_TOKEN)."`
	Port       int      `default:"9000" help:"HTTP listen port (0: any free port, printed on stderr)."`
	AllowWrite bool     `name:"allow-write" help:"List and enable the write tools (deploy_apply, rollback, source_add, source_remove, source_update)."`
	Toolsets   []string `sep:"," placeholder:"core,sources,resources,skills" help:"Tool groups to serve: core, sources, resources, skills (the Skills extension; packages reserved); default all."`
	Skills     bool     `default:"true" negatable:"" help:"Serve the selected profile's skills over MCP's Skills extension (skills/list, skills/get, skill:// resources); --no-skills or --skills=false turns it off."`
	LogFile    string   `name:"log-file" type:"path" help:"Write logs to this file instead of stderr."`
	LogLevel   string   `name:"log-level" enum:"debug,info,warn,error" default:"info" help:"Log level: debug, info, warn, error."`
}

// Run implements the command. stdout carries only JSON-RPC, even with
// --json: a failure that ends the server (or keeps it from starting) is
// reported on stderr and in the log, never as an envelope on stdout, and
// exits 1. SIGINT/SIGTERM finish the calls in flight, then exit 0.
func (c *MCPServeCmd) Run(a *App) error {
	err := c.serve(a)
	if err == nil {
		return nil
	}
	// The human report goes to stderr whatever --json says: stdout is the
	// JSON-RPC channel.
	a.Globals.JSON = false
	return exitCode(a.failWith("mcp", "mcp serve", err, nil))
}

func (c *MCPServeCmd) serve(a *App) (err error) {
	if a.Globals.DryRun {
		return apperr.New(apperr.InvalidArgument, "`mcp serve` has no --dry-run").
			WithHint("drop --dry-run: the server is read-only unless --allow-write, and the tools take their own dry_run argument").
			With("command", "mcp serve").With("reason_code", "invalid_argument").With("next_actions", []string{"fix_arguments"})
	}
	if err := a.Env.Check(); err != nil {
		return err
	}
	logger, closeLog, err := c.logger(a.Stderr)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil && c.LogFile != "" { // stderr gets the error from Run
			ae := apperr.As(err)
			logger.Error("agentpack mcp serve failed", "code", ae.Code, "error", ae.Message, "hint", ae.Hint)
		}
		closeLog()
	}()
	token := strings.TrimSpace(os.Getenv("AGENTPACK_MCP_TOKEN"))
	loopback := isLoopbackHost(c.Host)
	if c.Transport == "http" && !loopback && token == "" && c.AllowWrite {
		// A loopback listener refuses foreign Host headers (DNS rebinding);
		// on another address a web page could reach the write tools.
		return apperr.New(apperr.InvalidArgument, "refusing --allow-write on non-loopback --host %s without AGENTPACK_MCP_TOKEN", c.Host).
			WithHint("set AGENTPACK_MCP_TOKEN to require a bearer token, listen on 127.0.0.1, or drop --allow-write").
			With("host", c.Host).With("reason_code", "token_required").With("next_actions", []string{"set_agentpack_mcp_token"})
	}
	srv, err := mcpserver.New(mcpserver.Options{
		Env:           a.Env,
		NewEngine:     a.newEngine,
		Defaults:      a.Request(),
		AllowWrite:    c.AllowWrite,
		Toolsets:      c.Toolsets,
		DisableSkills: !c.Skills,
		Logger:        logger,
	})
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger.Info("agentpack mcp serve", "version", envelope.Version, "transport", c.Transport, "allow_write", c.AllowWrite, "tools", srv.ListedTools(), "skills", srv.SkillsServed())
	if c.Transport == "stdio" {
		if err := srv.ServeStdio(ctx, a.Stdin, a.Stdout); err != nil {
			return apperr.Wrap(err, apperr.IOFailed, "the stdio session ended: %v", err).
				WithHint("the client's stdin or stdout failed; see the log")
		}
		return nil
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(c.Host, strconv.Itoa(c.Port)))
	if err != nil {
		return apperr.Wrap(err, apperr.InvalidArgument, "cannot listen on %s:%d", c.Host, c.Port).
			WithHint("pick another --port, or stop the process using it")
	}
	if !loopback && token == "" {
		logger.Warn("listening on a non-loopback address without AGENTPACK_MCP_TOKEN: anyone who can reach it can call the read tools", "host", c.Host)
	}
	// One parseable line, so scripts and tests can find a --port 0 server.
	fmt.Fprintf(a.Stderr, "agentpack mcp: listening on http://%s/mcp\n", ln.Addr())
	return srv.ServeHTTP(ctx, ln, mcpserver.HTTPOptions{BearerToken: token})
}

// isLoopbackHost reports whether --host names the loopback interface:
// "localhost" or a loopback IP.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(strings.TrimSuffix(host, "."), "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
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
