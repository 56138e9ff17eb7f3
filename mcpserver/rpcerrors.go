package mcpserver

import (
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/agentpack/agentpack/internal/lazyregexp"
)

// maxRPCMessage caps the message of a JSON-RPC error the server sends.
const maxRPCMessage = 1024

var reBeforeInit = lazyregexp.New(`^method "(.*)" is invalid during session initialization$`)

// cleanRPCError rewrites, in place, the JSON-RPC errors the SDK answers
// protocol faults with, and reports whether it changed e:
//
//   - a request before initialize and a second initialize carry code 0,
//     which JSON-RPC does not define: they become -32600 invalid request;
//   - params of the wrong JSON type ("protocolVersion": 5) are answered with
//     the decoder's text, which names Go types and quotes all the params
//     (so a large request echoes back whole): they become -32602 invalid
//     params naming the JSON field and type;
//   - any other code 0 becomes -32603 internal error;
//   - a message over maxRPCMessage bytes is cut.
func cleanRPCError(e *jsonrpc.Error) bool {
	code, msg := e.Code, e.Message
	switch {
	case code == 0 && reBeforeInit.MatchString(msg):
		method := reBeforeInit.FindStringSubmatch(msg)[1]
		code, msg = jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: %q before initialize; send initialize first", capEcho(method))
	case code == 0 && msg == `duplicate "initialize" received`:
		code, msg = jsonrpc.CodeInvalidRequest, alreadyInitialized
	case strings.HasPrefix(msg, "handling '") && strings.Contains(msg, ": unmarshaling "):
		code, msg = jsonrpc.CodeInvalidParams, paramsTypeMessage(msg)
	case code == 0:
		code = jsonrpc.CodeInternalError
	}
	msg = capBytes(msg, maxRPCMessage)
	if code == e.Code && msg == e.Message {
		return false
	}
	e.Code, e.Message = code, msg
	return true
}

// alreadyInitialized answers a second initialize on one session.
const alreadyInitialized = "invalid request: the session is already initialized"

// paramsTypeMessage words a params decoding failure of the SDK, e.g.
//
//	handling 'initialize': unmarshaling "{…}" into a *mcp.initializeParamsV2:
//	json: cannot unmarshal "5,…" into Go struct field
//	mcp.initializeParamsV2.protocolVersion of type string
//
// as `invalid params of "initialize": "protocolVersion" must be a string`.
// The quoted params come from the caller, so the field is taken from the
// end of the text, where the decoder wrote it.
func paramsTypeMessage(msg string) string {
	of := "invalid params"
	if rest, ok := strings.CutPrefix(msg, "handling '"); ok {
		if method, _, ok := strings.Cut(rest, "': "); ok {
			of = fmt.Sprintf("invalid params of %q", capEcho(method))
		}
	}
	const field, valueOf = " into Go struct field ", " into Go value of type "
	if i := strings.LastIndex(msg, field); i >= 0 {
		path, goType, ok := strings.Cut(msg[i+len(field):], " of type ")
		if ok && !strings.ContainsAny(path, " \"") {
			return fmt.Sprintf("%s: %q must be %s", of, jsonFieldPath(path), jsonTypeOf(goType))
		}
	}
	if i := strings.LastIndex(msg, valueOf); i >= 0 {
		return fmt.Sprintf("%s: params must be %s", of, jsonTypeOf(msg[i+len(valueOf):]))
	}
	return of + ": params do not match the method's schema"
}

// jsonFieldPath keeps the JSON names at the end of a decoder's field path
// ("mcp.initializeParamsV2mcp.Implementation.clientInfo.version" →
// "clientInfo.version"): it stops at the first Go type or package name.
func jsonFieldPath(path string) string {
	segs := strings.Split(path, ".")
	start := len(segs) - 1
	for start > 0 {
		s := segs[start-1]
		if s == "" || s[0] < 'a' || s[0] > 'z' || strings.Contains(s, "Params") || strings.HasSuffix(s, "mcp") {
			break
		}
		start--
	}
	return strings.Join(segs[start:], ".")
}

// jsonTypeOf names the JSON type a Go type decodes from.
func jsonTypeOf(goType string) string {
	t := strings.TrimLeft(strings.TrimSpace(goType), "*")
	switch {
	case t == "string":
		return "a string"
	case t == "bool":
		return "a boolean"
	case strings.HasPrefix(t, "int") || strings.HasPrefix(t, "uint") || strings.HasPrefix(t, "float"):
		return "a number"
	case strings.HasPrefix(t, "[]"):
		return "an array"
	}
	return "an object"
}
