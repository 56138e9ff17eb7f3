package mcpserver

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestCleanRPCError covers the SDK error texts the stdio gate rewrites
// (the end-to-end cases are in TestStdioProtocolErrorCodes).
func TestCleanRPCError(t *testing.T) {
	for _, c := range []struct {
		code     int64
		msg      string
		wantCode int64
		wantMsg  string
	}{
		{0, `method "tools/list" is invalid during session initialization`, -32600, `invalid request: "tools/list" before initialize; send initialize first`},
		{0, `duplicate "initialize" received`, -32600, alreadyInitialized},
		{0, `handling 'initialize': unmarshaling "{\"protocolVersion\":5}" into a *mcp.initializeParamsV2: json: cannot unmarshal "5}" into Go struct field mcp.initializeParamsV2.protocolVersion of type string`,
			-32602, `invalid params of "initialize": "protocolVersion" must be a string`},
		{-32602, `handling 'tools/call': invalid params: unmarshaling "{\"name\":\"x into Go struct field a.b of type bool\",\"arguments\":1}" into a *mcp.CallToolParamsRaw: json: cannot unmarshal "1}" into Go struct field mcp.CallToolParamsRaw.arguments of type json.RawMessage`,
			-32602, `invalid params of "tools/call": "arguments" must be an object`},
		{-32602, `handling 'x': invalid params: unmarshaling "[]" into a *mcp.P: json: cannot unmarshal "[]" into Go struct field InitializeParams.capabilities.roots.listChanged of type bool`,
			-32602, `invalid params of "x": "capabilities.roots.listChanged" must be a boolean`},
		{0, "something else", -32603, "something else"},
		{-32601, `method not found: "nosuch"`, -32601, `method not found: "nosuch"`},
	} {
		e := &jsonrpc.Error{Code: c.code, Message: c.msg}
		changed := cleanRPCError(e)
		if e.Code != c.wantCode || e.Message != c.wantMsg || changed != (c.code != c.wantCode || c.msg != c.wantMsg) {
			t.Errorf("%.60s:\n got %d %q (changed %v)\nwant %d %q", c.msg, e.Code, e.Message, changed, c.wantCode, c.wantMsg)
		}
	}
}
