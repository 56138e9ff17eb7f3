// Package mcpserver serves agentpack to IDE agents over the Model Context
// Protocol. It adapts: every tool is a thin call of the engine function the
// CLI command uses and returns the same envelope; resources and prompts are
// read fresh from disk on every request.
package mcpserver

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/engine/target"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/envelope"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ProtocolVersions are the MCP versions the server speaks; a client asking
// for another gets the first.
var ProtocolVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26"}

// Options configure a [Server].
type Options struct {
	// Env is the environment of every call's engine.
	Env engine.Env
	// Adapters are the targets of every call's engine.
	Adapters *target.Set
	// NewEngine builds the engine of one call; nil means
	// engine.New(Env, Adapters, targets.NewSet()). The CLI passes the constructor its
	// commands use.
	NewEngine func() *engine.Engine
	// Defaults are the global --repo, --profile, --target and --machine:
	// what a call that omits them gets.
	Defaults engine.Request
	// AllowWrite lists and enables the write tools.
	AllowWrite bool
	// Toolsets selects tool groups (see [Toolsets]); empty means all.
	// Without the skills toolset the Skills extension is off.
	Toolsets []string
	// DisableSkills turns the Skills extension (SEP-2640) off: nothing
	// about skills is declared, listed or answered.
	DisableSkills bool
	// SkillsPageSize is the page size of skills/list and
	// resources/directory/read; 0 means 100.
	SkillsPageSize int
	// Logger receives the server's logs; nil discards them.
	Logger *slog.Logger
	// Now is the clock of confirm tokens; nil means time.Now.
	Now func() time.Time
}

// Server is agentpack's MCP server. One Server serves any number of
// sessions (stdio or HTTP); confirm tokens are shared between them.
type Server struct {
	opts     Options
	log      *slog.Logger
	mcp      *mcp.Server
	tools    map[string]*tool
	listed   []*tool
	tokens   *confirmTokens
	inflight inflight
	// skillsOn serves the Skills extension.
	skillsOn bool
	// cache is the load cache every call's engine shares.
	cache *engine.LoadCache

	// testHookCall, when set, runs at the start of every tool call.
	testHookCall func(ctx context.Context, name string)
}

// New builds the server and registers its tools, resources and prompts.
func New(opts Options) (*Server, error) {
	if opts.NewEngine == nil && opts.Adapters == nil {
		return nil, errors.New("mcpserver: Options need Adapters or NewEngine")
	}
	if opts.NewEngine == nil {
		env, adapters := opts.Env, opts.Adapters
		opts.NewEngine = func() *engine.Engine { return engine.New(env, adapters) }
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	// Every call's engine shares one cache of compiled desired states: a
	// call on an unchanged repo re-stats what the last load read instead
	// of reading, parsing and hashing it again.
	// A file watcher on the folders each load read lets a call trust the
	// cache without re-stat'ing the repo while nothing was heard.
	build, cache := opts.NewEngine, engine.NewLoadCache()
	cache.Watch = true
	opts.NewEngine = func() *engine.Engine {
		e := build()
		e.LoadCache = cache
		return e
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	sets, err := selectToolsets(opts.Toolsets)
	if err != nil {
		return nil, err
	}
	s := &Server{opts: opts, log: opts.Logger, tools: map[string]*tool{}, tokens: newConfirmTokens(opts.Now), cache: cache,
		skillsOn: sets[ToolsetSkills] && !opts.DisableSkills}
	// Tools are fixed at startup and prompts and resources are computed
	// per request, so nothing ever sends list_changed.
	caps := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}, Resources: &mcp.ResourceCapabilities{}, Prompts: &mcp.PromptCapabilities{}}
	if s.skillsOn {
		skillsCapability(caps)
	}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "agentpack", Version: envelope.Version}, &mcp.ServerOptions{
		Logger:                    opts.Logger,
		SupportedProtocolVersions: ProtocolVersions,
		Capabilities:              caps,
		Instructions: "agentpack compiles a desired-state repo of AI-coding assets into files for codex, claude_code, cursor and vscode. " +
			"Use plan/status to inspect; deploy returns a confirm_token that deploy_apply (write mode only) needs.",
	})
	for _, t := range allTools() {
		if !sets[t.toolset] {
			continue
		}
		if t.compiled, err = compileSchema(t.name, t.schema); err != nil {
			return nil, apperr.Wrap(err, apperr.Unexpected, "tool %s has a bad input schema", t.name)
		}
		s.tools[t.name] = t
		if t.write && !opts.AllowWrite {
			continue // hidden; calls are refused by the middleware
		}
		s.listed = append(s.listed, t)
		s.mcp.AddTool(t.def(), s.handler(t))
	}
	s.addResources()
	if s.skillsOn {
		if err := s.addSkillMethods(); err != nil {
			return nil, apperr.Wrap(err, apperr.Unexpected, "cannot register the skills methods")
		}
	}
	s.mcp.AddReceivingMiddleware(s.middleware)
	return s, nil
}

// Close stops the file watcher of the server's load cache (ServeStdio and
// ServeHTTP close the server when they return).
func (s *Server) Close() { s.cache.Close() }

// MCP returns the underlying go-sdk server.
func (s *Server) MCP() *mcp.Server { return s.mcp }

// SkillsServed reports whether the Skills extension is on.
func (s *Server) SkillsServed() bool { return s.skillsOn }

// ListedTools returns the names of the tools tools/list shows, in order.
func (s *Server) ListedTools() []string {
	out := make([]string, len(s.listed))
	for i, t := range s.listed {
		out[i] = t.name
	}
	return out
}

func selectToolsets(names []string) (map[string]bool, error) {
	sets := map[string]bool{}
	if len(names) == 0 {
		names = []string{"all"}
	}
	for _, n := range names {
		n = strings.TrimSpace(n)
		switch {
		case n == "all":
			for _, t := range Toolsets {
				sets[t] = true
			}
		case slices.Contains(Toolsets, n):
			sets[n] = true
		default:
			return nil, apperr.New(apperr.InvalidArgument, "unknown toolset %q", n).
				WithHint("use any of: all, %s", strings.Join(Toolsets, ", ")).With("toolset", n)
		}
	}
	return sets, nil
}

// request is the engine request of a call: its arguments over the
// server's defaults.
func (s *Server) request(a *args) engine.Request {
	r := s.opts.Defaults
	if a.Repo != "" {
		r.Repo = a.Repo
	}
	if a.Profile != "" {
		r.Profile = a.Profile
	}
	if a.Target != "" {
		r.Target = a.Target
	}
	if a.Machine != "" {
		r.Machine = a.Machine
	}
	return r
}

// handler validates a call in the one shared place, then runs the tool on
// a fresh engine, so every call reads the state from disk.
func (s *Server) handler(t *tool) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if s.testHookCall != nil {
			s.testHookCall(ctx, t.name)
		}
		start := time.Now()
		env := s.runTool(ctx, t, req.Params.Arguments)
		code := ""
		if !env.OK && len(env.Errors) > 0 {
			code = string(env.Errors[0].Code)
		}
		s.log.Debug("tool call", "tool", t.name, "ok", env.OK, "code", code, "duration", time.Since(start))
		return toolResult(env), nil
	}
}

func (s *Server) runTool(ctx context.Context, t *tool, raw []byte) (env *envelope.Envelope) {
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("tool panicked", "tool", t.name, "panic", r)
			env = t.fail(apperr.New(apperr.Unexpected, "internal error in %s: %v", t.name, r).WithHint("please report this bug"))
		}
	}()
	a, err := t.checkArgs(raw)
	if err != nil {
		return t.fail(err)
	}
	eng := s.opts.NewEngine()
	if !t.write {
		eng.ReadOnly() // a read tool cannot write, whatever path it takes
	} else {
		// What this call writes is heard by the watcher a moment later: the
		// next call checks stat data rather than race the event.
		defer s.cache.Distrust()
	}
	return t.run(ctx, &call{srv: s, args: a, req: s.request(a), eng: eng})
}

// defaultRequest is the request of resources and prompts, which take no
// arguments: the server's defaults.
func (s *Server) defaultRequest() engine.Request { return s.opts.Defaults }
