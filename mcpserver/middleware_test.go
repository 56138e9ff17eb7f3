package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSecondInitializeRefused: a second initialize on one session is
// -32600 on every transport (the SDK answers it with code 0); driven here
// over raw in-memory JSON-RPC, without the stdio gate.
func TestSecondInitializeRefused(t *testing.T) {
	te := newTestEnv(t)
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := te.server(t).MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := ct.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(); ss.Wait() })
	params := json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`)
	for i, want := range []int64{0, jsonrpc.CodeInvalidRequest} {
		id, _ := jsonrpc.MakeID(float64(i + 1))
		if err := conn.Write(ctx, &jsonrpc.Request{ID: id, Method: "initialize", Params: params}); err != nil {
			t.Fatal(err)
		}
		msg, err := conn.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		resp, ok := msg.(*jsonrpc.Response)
		if !ok {
			t.Fatalf("not a response: %#v", msg)
		}
		var we *jsonrpc.Error
		switch {
		case want == 0 && resp.Error != nil:
			t.Fatalf("first initialize: %v", resp.Error)
		case want != 0 && (!errors.As(resp.Error, &we) || we.Code != want || we.Message != alreadyInitialized):
			t.Fatalf("second initialize: want %d %q, got %#v", want, alreadyInitialized, resp.Error)
		}
	}
}
