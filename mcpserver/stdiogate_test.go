package mcpserver

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// rpcReply is one decoded JSON-RPC response line.
type rpcReply struct {
	ID    json.RawMessage `json:"id"`
	Error *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Result json.RawMessage `json:"result"`
	raw    string
}

func decodeReply(t testing.TB, line string) rpcReply {
	t.Helper()
	var r rpcReply
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		t.Fatalf("not a JSON-RPC line: %v: %.300q", err, line)
	}
	r.raw = line
	return r
}

// initStdio starts a stdio session on s and completes the handshake.
func initStdio(t testing.TB, s *Server) *stdioSession {
	t.Helper()
	ss := startStdio(t, context.Background(), s)
	ss.send(initLine)
	ss.recv()
	ss.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return ss
}

// expectServing fails if ServeStdio has returned.
func (ss *stdioSession) expectServing(what string) {
	ss.t.Helper()
	select {
	case err := <-ss.done:
		ss.t.Fatalf("%s ended the stdio session (exit 1 in the binary): ServeStdio returned %v", what, err)
	default:
	}
}

// finish closes stdin and waits for ServeStdio to return nil.
func (ss *stdioSession) finish() {
	ss.t.Helper()
	_ = ss.in.Close()
	select {
	case err := <-ss.done:
		if err != nil {
			ss.t.Fatalf("ServeStdio: %v", err)
		}
	case <-time.After(20 * time.Second):
		ss.t.Fatal("ServeStdio did not return after EOF")
	}
}

// TestStdioTrailingBytesKeepServing: a valid message followed by more bytes
// on its line used to reach the SDK, whose stream decoder ended the session
// ("invalid trailing data") and dropped every pending response. The line is
// answered -32700 (id null), serving goes on, and the call in flight is
// still answered.
func TestStdioTrailingBytesKeepServing(t *testing.T) {
	const ping = `{"jsonrpc":"2.0","id":3,"method":"ping"}`
	for name, line := range map[string]string{
		"brace":   ping + `}`,
		"bracket": ping + `]`,
		"two":     ping + `{"jsonrpc":"2.0","id":5,"method":"ping"}`,
		"nul":     ping + "\x00",
		"word":    ping + ` x`,
	} {
		t.Run(name, func(t *testing.T) {
			te := newTestEnv(t)
			s := te.server(t)
			entered, release := blockPlan(s)
			ss := initStdio(t, s)
			ss.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"plan","arguments":{}}}`)
			<-entered
			ss.send(line)
			r := decodeReply(t, ss.recv())
			if string(r.ID) != "null" || r.Error == nil || r.Error.Code != -32700 || !strings.Contains(r.Error.Message, "extra bytes") {
				t.Fatalf("want -32700 (id null) for %q, got %s", line, r.raw)
			}
			time.Sleep(100 * time.Millisecond) // the SDK's reader would fail now
			ss.expectServing("a line with trailing bytes")
			ss.send(`{"jsonrpc":"2.0","id":4,"method":"ping"}`)
			if r := decodeReply(t, ss.recv()); string(r.ID) != "4" || r.Error != nil {
				t.Fatalf("the ping after the bad line: %s", r.raw)
			}
			close(release)
			if r := decodeReply(t, ss.recv()); string(r.ID) != "2" || r.Error != nil || !strings.Contains(string(r.Result), `"ok":true`) {
				t.Fatalf("the pending plan call was not answered: %.300s", r.raw)
			}
			ss.finish()
		})
	}
}

// TestStdioNullIDAnswered: MCP forbids a null id; the SDK took such a
// request for a notification and never answered it. It is answered -32600
// with id null.
func TestStdioNullIDAnswered(t *testing.T) {
	te := newTestEnv(t)
	ss := initStdio(t, te.server(t))
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":null,"method":"ping"}`,
		`{"jsonrpc":"2.0","id": null ,"method":"tools/call","params":{"name":"plan","arguments":{}}}`,
	} {
		ss.send(line)
		r := decodeReply(t, ss.recv())
		if string(r.ID) != "null" || r.Error == nil || r.Error.Code != -32600 || !strings.Contains(r.Error.Message, "null") {
			t.Fatalf("want -32600 (id null) for %s, got %s", line, r.raw)
		}
	}
	ss.send(`{"jsonrpc":"2.0","id":4,"method":"ping"}`)
	if r := decodeReply(t, ss.recv()); string(r.ID) != "4" || r.Error != nil {
		t.Fatalf("the ping after: %s", r.raw)
	}
	ss.finish()
}

// goLeak matches what the SDK's error texts leaked: Go type and package
// names and decoder wording.
func goLeak(msg string) bool {
	for _, s := range []string{"Go struct", "Go value", "mcp.", "*mcp", "unmarshal", "initializeParams"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// TestStdioProtocolErrorCodes: requests before initialize, a second
// initialize, and params of the wrong JSON type were answered with code 0
// or with the decoder's text (Go type names, all the params quoted). They
// get -32600 / -32602 and a short message naming the JSON field.
func TestStdioProtocolErrorCodes(t *testing.T) {
	te := newTestEnv(t)
	ss := startStdio(t, context.Background(), te.server(t))
	big := strings.Repeat("x", 1<<20)
	steps := []struct {
		line string
		code int64
		msg  string // a substring of the message
	}{
		{`{"jsonrpc":"2.0","id":10,"method":"tools/list"}`, -32600, `"tools/list" before initialize`},
		{`{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"plan","arguments":{}}}`, -32600, "send initialize first"},
		{`{"jsonrpc":"2.0","id":12,"method":"initialize","params":{"protocolVersion":5,"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
			-32602, `invalid params of "initialize": "protocolVersion" must be a string`},
		{`{"jsonrpc":"2.0","id":13,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":1},"x":"` + big + `"}}`,
			-32602, `"clientInfo.version" must be a string`},
		{initLine, 0, ""},
		{strings.Replace(initLine, `"id":1`, `"id":14`, 1), -32600, "already initialized"},
		{`{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"name":5,"arguments":{"repo":"` + big + `"}}}`,
			-32602, `invalid params of "tools/call": "name" must be a string`},
		{`{"jsonrpc":"2.0","id":16,"method":"ping","params":[1]}`, -32602, `invalid params of "ping": params must be an object`},
		{`{"jsonrpc":"2.0","id":17,"method":"resources/read","params":{"uri":true}}`, -32602, `"uri" must be a string`},
		{`{"jsonrpc":"2.0","id":18,"method":"tools/list","params":{"cursor":{}}}`, -32602, `"cursor" must be a string`},
	}
	for _, st := range steps {
		ss.send(st.line)
		line := ss.recv()
		r := decodeReply(t, line)
		if st.code == 0 {
			if r.Error != nil {
				t.Fatalf("initialize: %s", line)
			}
			ss.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			continue
		}
		if r.Error == nil || r.Error.Code != st.code || !strings.Contains(r.Error.Message, st.msg) || goLeak(r.Error.Message) {
			t.Errorf("%.120s:\n got %.500s\nwant code %d and a message with %q, no Go names", st.line, line, st.code, st.msg)
		}
		if len(line) > 2048 {
			t.Errorf("%.120s: a %d-byte answer", st.line, len(line))
		}
	}
	ss.send(`{"jsonrpc":"2.0","id":19,"method":"ping"}`)
	if r := decodeReply(t, ss.recv()); string(r.ID) != "19" || r.Error != nil {
		t.Fatalf("ping: %s", r.raw)
	}
	ss.finish()
}

// TestStdioOverLimitLine: a line over the hard limit (maxLine, 4 MiB like
// the HTTP body limit) is refused whole with a short -32600 and serving
// goes on. A 5 MiB line used to reach the tool, whose errors echoed it.
func TestStdioOverLimitLine(t *testing.T) {
	te := newTestEnv(t)
	ss := initStdio(t, te.server(t))
	ss.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"plan","arguments":{"repo":"` + strings.Repeat("a", 5<<20) + `"}}}`)
	r := decodeReply(t, ss.recv())
	if string(r.ID) != "null" || r.Error == nil || r.Error.Code != -32600 || len(r.raw) > 512 {
		t.Fatalf("want a short -32600 (id null), got %.500s", r.raw)
	}
	ss.send(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	if r := decodeReply(t, ss.recv()); string(r.ID) != "3" {
		t.Fatalf("ping: %s", r.raw)
	}
	ss.finish()
}
