package mcpserver

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestHTTPProtocolErrors: over streamable HTTP, a request before initialize
// is -32600 and a protocolVersion that is no string -32602, with messages
// that name no Go type (the SDK answers both with code 0 and the decoder's
// text).
func TestHTTPProtocolErrors(t *testing.T) {
	te := newTestEnv(t)
	srv := httptest.NewServer(te.server(t).HTTPHandler(HTTPOptions{}))
	defer srv.Close()
	post := func(sid, body string) (*http.Response, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest("POST", srv.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		raw, _ := io.ReadAll(res.Body)
		text := string(raw)
		if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
			for _, line := range strings.Split(text, "\n") {
				if after, ok := strings.CutPrefix(line, "data: "); ok {
					text = after
					break
				}
			}
		}
		var msg map[string]any
		if err := json.Unmarshal([]byte(text), &msg); err != nil {
			t.Fatalf("answer is no JSON-RPC message: %q", raw)
		}
		return res, msg
	}
	wantError := func(msg map[string]any, code float64, text string) {
		t.Helper()
		e, _ := msg["error"].(map[string]any)
		m, _ := e["message"].(string)
		if e == nil || e["code"] != code || !strings.Contains(m, text) {
			t.Fatalf("want error %v containing %q, got %v", code, text, msg)
		}
		for _, leak := range []string{"Go struct", "mcp.", "*mcp", "unmarshal"} {
			if strings.Contains(m, leak) {
				t.Errorf("message leaks %q: %s", leak, m)
			}
		}
	}
	const init = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":%s,"capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`

	_, msg := post("", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	wantError(msg, -32600, `"tools/list" before initialize`)

	_, msg = post("", strings.Replace(init, "%s", "5", 1))
	wantError(msg, -32602, `"protocolVersion" must be a string`)

	res, msg := post("", strings.Replace(init, "%s", `"2025-06-18"`, 1))
	if msg["result"] == nil {
		t.Fatalf("initialize failed: %v", msg)
	}
	sid := res.Header.Get("Mcp-Session-Id")
	_, msg = post(sid, strings.Replace(init, "%s", `{"v":1}`, 1))
	wantError(msg, -32602, `"protocolVersion" must be a string`)

	// A good answer passes unchanged.
	if _, msg = post(sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); msg["result"] == nil {
		t.Fatalf("tools/list failed: %v", msg)
	}
}

// TestIdleHTTPSessionExpires: a session idle longer than SessionTimeout is
// closed; its id is then unknown (404) and the client initializes again.
func TestIdleHTTPSessionExpires(t *testing.T) {
	te := newTestEnv(t)
	srv := httptest.NewServer(te.server(t).HTTPHandler(HTTPOptions{SessionTimeout: 100 * time.Millisecond}))
	defer srv.Close()
	post := func(sid, body string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("POST", srv.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res
	}
	res := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`)
	sid := res.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatal("no session id")
	}
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`).StatusCode == http.StatusNotFound {
			return
		}
	}
	t.Fatal("the idle session was never closed")
}
