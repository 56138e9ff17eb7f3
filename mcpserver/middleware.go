package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCP method names the middleware handles.
const (
	methodCallTool      = "tools/call"
	methodListPrompts   = "prompts/list"
	methodGetPrompt     = "prompts/get"
	methodListResources = "resources/list"
	methodReadResource  = "resources/read"
)

// middleware runs before the SDK's own dispatch. It tracks calls in flight
// for a graceful shutdown, answers hidden write tools with E_WRITE_DISABLED
// (the SDK would make an unregistered tool a JSON-RPC error), and computes
// prompts and module resources fresh from disk on every request.
func (s *Server) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if strings.HasPrefix(method, "notifications/") {
			return next(ctx, method, req)
		}
		if !s.inflight.enter() {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "agentpack mcp is shutting down"}
		}
		defer s.inflight.leave()
		switch method {
		case methodCallTool:
			if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok {
				if t := s.tools[p.Name]; t != nil && t.write && !s.opts.AllowWrite {
					return toolResult(t.fail(writeDisabled(t.name))), nil
				}
			}
		case methodListPrompts:
			return s.listPrompts()
		case methodGetPrompt:
			if p, ok := req.GetParams().(*mcp.GetPromptParams); ok {
				res, err := getPrompt(s.opts.NewEngine(), s.defaultRequest(), p.Name, p.Arguments)
				if err != nil {
					return nil, rpcError(err)
				}
				return res, nil
			}
		case methodListResources:
			return s.listResources(ctx, method, req, next)
		case methodReadResource:
			// Module URIs are matched here, not by the SDK's template regexp,
			// so both the readable form (skill:x/a/b.md) and the RFC 6570
			// expansion (skill%3Ax/a%2Fb.md) work.
			if p, ok := req.GetParams().(*mcp.ReadResourceParams); ok && isModuleURI(p.URI) {
				return s.readResource(p.URI)
			}
		}
		return next(ctx, method, req)
	}
}

func writeDisabled(name string) error {
	return apperr.New(apperr.WriteDisabled, "tool %s is disabled: the server is read-only", name).
		WithHint("restart `agentpack mcp serve` with --allow-write to enable write tools").
		With("tool", name).With("reason_code", "write_disabled").With("next_actions", []string{"restart_with_allow_write"})
}

func (s *Server) listPrompts() (mcp.Result, error) {
	list, err := loadPrompts(s.opts.NewEngine(), s.defaultRequest())
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
	files, err := moduleFiles(s.opts.NewEngine(), s.defaultRequest())
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

func (s *Server) readResource(uri string) (*mcp.ReadResourceResult, error) {
	c, err := readResource(s.opts.NewEngine(), s.defaultRequest(), uri)
	if err != nil {
		return nil, rpcError(err)
	}
	res := &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: c.URI, MIMEType: c.MIMEType, Text: c.Text}}}
	res.CacheScope = "private"
	return res, nil
}

// addResources registers the fixed resources and the module template.
func (s *Server) addResources() {
	for _, r := range fixedResources {
		s.mcp.AddResource(&mcp.Resource{URI: r.URI, Name: r.Name, MIMEType: r.MIMEType, Description: r.Description},
			func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return s.readResource(req.Params.URI)
			})
	}
	for _, t := range []struct{ uri, name, desc string }{
		{SourceURITemplate, "source", "The artifacts of one source at its pinned commit (source scan)."},
		{SourceCandidatesTemplate, "source-candidates", "A source's artifacts that no module uses yet."},
	} {
		s.mcp.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: t.uri, Name: t.name, MIMEType: mimeJSON, Description: t.desc},
			func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return s.readResource(req.Params.URI)
			})
	}
	s.mcp.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: ModuleURITemplate, Name: "module-file",
		Description: "A file of a module of the selected profile; MIME type from its extension."},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return s.readResource(req.Params.URI)
		})
}

// rpcError turns an apperr failure of resources/read or prompts/get into a
// JSON-RPC error: "resource not found" for a missing module, file or source,
// invalid params carrying the code and details otherwise.
func rpcError(err error) error {
	ae := apperr.As(err)
	data, _ := json.Marshal(map[string]any{"code": ae.Code, "hint": ae.Hint, "details": ae.Details})
	code := int64(jsonrpc.CodeInvalidParams)
	if ae.Code == apperr.Unexpected || ae.Code == apperr.IOFailed {
		code = jsonrpc.CodeInternalError
	}
	if uri, ok := ae.Details["uri"].(string); ok && (ae.Code == apperr.ModuleNotFound || ae.Code == apperr.SourceNotFound) {
		return mcp.ResourceNotFoundError(uri)
	}
	return &jsonrpc.Error{Code: code, Message: fmt.Sprintf("[%s] %s", ae.Code, ae.Message), Data: data}
}
