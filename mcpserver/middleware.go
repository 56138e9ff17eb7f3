package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCP method names the middleware handles.
const (
	methodInitialize    = "initialize"
	methodCallTool      = "tools/call"
	methodListPrompts   = "prompts/list"
	methodGetPrompt     = "prompts/get"
	methodListResources = "resources/list"
	methodReadResource  = "resources/read"
)

// middleware runs before the SDK's own dispatch. It tracks calls in flight
// for a graceful shutdown, answers hidden write tools with E_WRITE_DISABLED
// (the SDK would make an unregistered tool a JSON-RPC error), and computes
// prompts and module resources fresh from disk on every request. It also
// keeps answers small whatever the request: a failed tool result quotes at
// most maxEcho bytes of each argument, and an unknown tool name or an
// over-long resource URI is not echoed whole. A second initialize is
// refused with -32600 (the SDK answers it with code 0).
func (s *Server) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if strings.HasPrefix(method, "notifications/") {
			return next(ctx, method, req)
		}
		ctx, leave, ok := s.inflight.enter(ctx)
		if !ok {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "agentpack mcp is shutting down"}
		}
		defer leave()
		switch method {
		case methodInitialize:
			if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss.InitializeParams() != nil {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: alreadyInitialized}
			}
		case methodCallTool:
			if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok {
				return s.callTool(ctx, method, req, p, next)
			}
		case methodListPrompts:
			return s.listPrompts(ctx)
		case methodGetPrompt:
			if p, ok := req.GetParams().(*mcp.GetPromptParams); ok {
				res, err := getPrompt(ctx, s.readEngine(), s.defaultRequest(), p.Name, p.Arguments)
				if err != nil {
					return nil, rpcError(err)
				}
				return res, nil
			}
		case methodListResources:
			return s.listResources(ctx, method, req, next)
		case methodReadResource:
			p, ok := req.GetParams().(*mcp.ReadResourceParams)
			switch {
			case ok && len(p.URI) > maxStringArg:
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
					Message: fmt.Sprintf("invalid params: uri of %d bytes, over the limit of %d", len(p.URI), maxStringArg)}
			case ok && isModuleURI(p.URI):
				// Module URIs are matched here, not by the SDK's template
				// regexp, so both the readable form (skill:x/a/b.md) and the
				// RFC 6570 expansion (skill%3Ax/a%2Fb.md) work.
				return s.readResource(ctx, p.URI)
			case ok && s.skillsOn && isSkillURI(p.URI):
				return s.readSkillResource(ctx, p.URI)
			}
		}
		return next(ctx, method, req)
	}
}

// callTool answers a call of an unknown tool (quoting at most maxEcho
// bytes of its name) and of a hidden write tool, and caps the argument
// values a failed result quotes.
func (s *Server) callTool(ctx context.Context, method string, req mcp.Request, p *mcp.CallToolParamsRaw, next mcp.MethodHandler) (mcp.Result, error) {
	t := s.tools[p.Name]
	if t == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", capEcho(p.Name))}
	}
	if t.write && !s.opts.AllowWrite {
		return toolResult(t.fail(writeDisabled(t.name))), nil
	}
	r, err := next(ctx, method, req)
	if res, ok := r.(*mcp.CallToolResult); ok && err == nil && len(p.Arguments) <= maxArgumentsBytes {
		return capToolEchoes(res, p.Arguments), nil
	}
	return r, err
}

func writeDisabled(name string) error {
	return apperr.New(apperr.WriteDisabled, "tool %s is disabled: the server is read-only", name).
		WithHint("restart `agentpack mcp serve` with --allow-write to enable write tools").
		With("tool", name).With("reason_code", "write_disabled").With("next_actions", []string{"restart_with_allow_write"})
}

func (s *Server) listPrompts(ctx context.Context) (mcp.Result, error) {
	list, err := loadPrompts(ctx, s.readEngine(), s.defaultRequest())
	if err != nil {
		// A repo that does not load has no prompts; say why in the log.
		s.log.Warn("prompts not listed", "error", err)
	}
	res := &mcp.ListPromptsResult{Prompts: []*mcp.Prompt{}}
	res.CacheScope = "private"
	for _, pm := range list {
		res.Prompts = append(res.Prompts, pm.prompt)
	}
	return res, nil
}

// listResources adds every module file to the SDK's list of the fixed
// resources.
func (s *Server) listResources(ctx context.Context, method string, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
	r, err := next(ctx, method, req)
	if err != nil {
		return nil, err
	}
	res, ok := r.(*mcp.ListResourcesResult)
	if !ok || res.NextCursor != "" {
		return r, nil
	}
	// Skills come first: clients (and the conformance suite) take the
	// first …/SKILL.md they list as a skill, and a module file's URI ends
	// the same way without being one.
	if s.skillsOn {
		res.Resources = append(res.Resources, s.skillResources(ctx)...)
	}
	files, err := moduleFiles(ctx, s.readEngine(), s.defaultRequest())
	if err != nil {
		s.log.Warn("module files not listed", "error", err)
	}
	for _, f := range files {
		info := f.info()
		res.Resources = append(res.Resources, &mcp.Resource{URI: info.URI, Name: info.Name, MIMEType: info.MIMEType,
			Description: info.Description, Size: info.Size})
	}
	return res, nil
}

func (s *Server) readResource(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
	c, err := readResource(ctx, s.readEngine(), s.defaultRequest(), uri)
	if err != nil {
		return nil, rpcError(err)
	}
	res := &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: c.URI, MIMEType: c.MIMEType, Text: c.Text, Blob: c.Blob}}}
	res.CacheScope = "private"
	return res, nil
}

// addResources registers the fixed resources and the module template.
func (s *Server) addResources() {
	for _, r := range fixedResources {
		s.mcp.AddResource(&mcp.Resource{URI: r.URI, Name: r.Name, MIMEType: r.MIMEType, Description: r.Description},
			func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return s.readResource(ctx, req.Params.URI)
			})
	}
	for _, t := range []struct{ uri, name, desc string }{
		{SourceURITemplate, "source", "The artifacts of one source at its pinned commit (source scan)."},
		{SourceCandidatesTemplate, "source-candidates", "A source's artifacts that no module uses yet."},
		{PackageURITemplate, "package", "One installed package (an entry of `agentpack list`)."},
	} {
		s.mcp.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: t.uri, Name: t.name, MIMEType: mimeJSON, Description: t.desc},
			func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return s.readResource(ctx, req.Params.URI)
			})
	}
	s.mcp.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: ModuleURITemplate, Name: "module-file",
		Description: "A file of a module of the selected profile; MIME type from its extension."},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return s.readResource(ctx, req.Params.URI)
		})
}

// rpcError turns an apperr failure of resources/read or prompts/get into a
// JSON-RPC error: "resource not found" for a missing module, file or source,
// invalid params carrying the code and details otherwise.
//
// A string detail longer than maxEcho (a URI, a prompt name: the caller's
// values) is quoted at most maxEcho bytes long, in the details and in the
// message.
func rpcError(err error) error {
	ae := apperr.As(err)
	var details map[string]any // nil stays nil (null in data)
	if ae.Details != nil {
		details = make(map[string]any, len(ae.Details))
	}
	var long []string
	for k, v := range ae.Details {
		if str, ok := v.(string); ok && len(str) > maxEcho {
			long = append(long, str)
		}
		details[k] = v
	}
	msg, hint := ae.Message, ae.Hint
	if len(long) > 0 {
		r := newEchoReplacer(long)
		msg, hint = r.Replace(msg), r.Replace(hint)
		details, _ = replaceStrings(details, r).(map[string]any)
	}
	data, _ := json.Marshal(map[string]any{"code": ae.Code, "hint": hint, "details": details})
	code := int64(jsonrpc.CodeInvalidParams)
	if ae.Code == apperr.Unexpected || ae.Code == apperr.IOFailed {
		code = jsonrpc.CodeInternalError
	}
	if uri, ok := details["uri"].(string); ok && (ae.Code == apperr.ModuleNotFound || ae.Code == apperr.SourceNotFound) {
		return mcp.ResourceNotFoundError(uri)
	}
	return &jsonrpc.Error{Code: code, Message: fmt.Sprintf("[%s] %s", ae.Code, msg), Data: data}
}

// readEngine is the engine of a prompt or resource request: read-only, like
// the engine of every read tool.
func (s *Server) readEngine() *engine.Engine {
	e := s.opts.NewEngine()
	e.ReadOnly()
	return e
}
