package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const initLine = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// blockPlan makes every plan call wait until release is closed, and
// reports on entered when one starts.
func blockPlan(s *Server) (entered chan struct{}, release chan struct{}) {
	entered, release = make(chan struct{}, 16), make(chan struct{})
	s.testHookCall = func(_ context.Context, name string) {
		if name == "plan" {
			entered <- struct{}{}
			<-release
		}
	}
	return entered, release
}

// TestStdioShutdownFinishesCallInFlight: cancelling the serve context (what
// SIGINT/SIGTERM do) answers the call in flight, refuses new ones, and
// returns nil (exit 0).
func TestStdioShutdownFinishesCallInFlight(t *testing.T) {
	te := newTestEnv(t)
	s := te.server(t)
	entered, release := blockPlan(s)
	ctx, cancel := context.WithCancel(context.Background())
	ss := startStdio(t, ctx, s)
	ss.send(initLine)
	ss.recv()
	ss.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	ss.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"plan","arguments":{}}}`)
	<-entered
	cancel()
	time.Sleep(50 * time.Millisecond) // let the shutdown start draining
	ss.send(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	if r := ss.recv(); !strings.Contains(r, `"id":3`) || !strings.Contains(r, "shutting down") {
		t.Fatalf("a request during shutdown: %s", r)
	}
	close(release)
	r := ss.recv()
	var resp struct {
		ID     int `json:"id"`
		Result struct {
			IsError           bool           `json:"isError"`
			StructuredContent map[string]any `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(r), &resp); err != nil || resp.ID != 2 || resp.Result.StructuredContent["ok"] != true {
		t.Fatalf("the call in flight was not answered: %s", r)
	}
	select {
	case err := <-ss.done:
		if err != nil {
			t.Fatalf("ServeStdio: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ServeStdio did not return after the call in flight")
	}
}

// TestClientDisconnectMidCall: a client that goes away during a call does
// not take the server down.
func TestClientDisconnectMidCall(t *testing.T) {
	te := newTestEnv(t)
	s := te.server(t)
	entered, release := blockPlan(s)
	clientEnd, serverEnd := net.Pipe()
	ss, err := s.MCP().Connect(context.Background(), &mcp.IOTransport{Reader: serverEnd, Writer: serverEnd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.IOTransport{Reader: clientEnd, Writer: clientEnd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	callErr := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "plan"})
		callErr <- err
	}()
	<-entered
	clientEnd.Close() // the client vanishes mid-call
	if err := <-callErr; err == nil {
		t.Error("the client's call should fail when its connection dies")
	}
	close(release)
	_ = ss.Wait() // the server session ends without a panic
	s.testHookCall = nil
	cs2 := connect(t, s, "2025-11-25")
	if env := callTool(t, cs2, "plan", nil); !env.OK {
		t.Fatalf("after a disconnect: %s", env.raw)
	}
}

func postJSON(t *testing.T, url string, body []byte, hdr map[string]string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func TestHTTPGuards(t *testing.T) {
	te := newTestEnv(t)
	s := te.server(t)
	srv := httptest.NewServer(s.HTTPHandler(HTTPOptions{BearerToken: "sekrit"}))
	defer srv.Close()
	url := srv.URL + "/mcp"
	auth := "Bearer sekrit"
	for _, tc := range []struct {
		name string
		body []byte
		hdr  map[string]string
		want int
	}{
		{"no token", []byte(initLine), nil, http.StatusUnauthorized},
		{"wrong token", []byte(initLine), map[string]string{"Authorization": "Bearer nope"}, http.StatusUnauthorized},
		{"dns rebinding", []byte(initLine), map[string]string{"Authorization": auth, "Host": "evil.example.com"}, http.StatusForbidden},
		{"cross origin", []byte(initLine), map[string]string{"Authorization": auth, "Origin": "https://evil.example.com", "Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
		{"huge body", append([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"`), bytes.Repeat([]byte("a"), DefaultMaxBodyBytes+10)...), map[string]string{"Authorization": auth}, http.StatusRequestEntityTooLarge},
		{"ok", []byte(initLine), map[string]string{"Authorization": auth}, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := postJSON(t, url, tc.body, tc.hdr)
			if resp.StatusCode != tc.want {
				b, _ := io.ReadAll(resp.Body)
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.want, b)
			}
		})
	}
	if resp, err := http.Get(srv.URL + "/other"); err != nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("other path: %v %v", resp, err)
	}
}

type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// TestHTTPSessionAndShutdown runs a Go client over streamable HTTP, then
// shuts the server down with a call in flight: the call is answered and
// ServeHTTP returns nil.
func TestHTTPSessionAndShutdown(t *testing.T) {
	te := newTestEnv(t)
	s := te.server(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.ServeHTTP(ctx, ln, HTTPOptions{BearerToken: "tok"}) }()
	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: "http://" + ln.Addr().String() + "/mcp",
		HTTPClient: &http.Client{Transport: bearerTransport{"tok"}}, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-03-26"})
	if err != nil {
		t.Fatal(err)
	}
	if v := cs.InitializeResult().ProtocolVersion; v != "2025-03-26" {
		t.Errorf("negotiated %s", v)
	}
	if env := callTool(t, cs, "plan", nil); !env.OK {
		t.Fatalf("plan over HTTP: %s", env.raw)
	}
	if env := callTool(t, cs, "rollback", M{"last": true, "yes": true}); env.code() != "E_WRITE_DISABLED" {
		t.Fatalf("rollback over HTTP: %s", env.raw)
	}

	entered, release := blockPlan(s)
	result := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "plan"})
		if err != nil {
			t.Errorf("call in flight: %v", err)
		}
		result <- res
	}()
	<-entered
	cancel()
	time.Sleep(50 * time.Millisecond)
	close(release)
	select {
	case res := <-result:
		if res == nil || res.IsError {
			t.Fatalf("call in flight: %+v", res)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the call in flight was not answered")
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("ServeHTTP: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ServeHTTP did not return")
	}
	cs.Close()
}

// TestStdioAnswersBeforeEOF: a client that writes its requests and closes
// stdin at once still gets every response before the server exits.
func TestStdioAnswersBeforeEOF(t *testing.T) {
	te := newTestEnv(t)
	in := strings.Join([]string{
		initLine,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"plan","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"nosuch"}}`,
		`not json`,
		`{"foo":1}`,
		`42`,
		`{"jsonrpc":"2.0","id":9,"method":"ping"` + strings.Repeat(" ", maxLine) + `}`,
		`{"jsonrpc":"2.0","id":4,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"agentpack://lock"}}`, // no trailing newline
	}, "\n")
	var out bytes.Buffer
	if err := te.server(t).ServeStdio(context.Background(), strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	ids := map[float64]bool{}
	rejected := map[float64]int{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var msg map[string]any
		if err := json.Unmarshal([]byte(line), &msg); err != nil || msg["jsonrpc"] != "2.0" {
			t.Fatalf("not JSON-RPC: %q", line)
		}
		if msg["id"] == nil {
			rejected[msg["error"].(map[string]any)["code"].(float64)]++
			continue
		}
		ids[msg["id"].(float64)] = true
	}
	// Bad lines are answered with JSON-RPC errors, and serving goes on.
	if rejected[-32700] != 1 || rejected[-32600] != 3 {
		t.Errorf("rejections by code: %v\n%s", rejected, out.String())
	}
	for _, id := range []float64{1, 2, 3, 4, 5} {
		if !ids[id] {
			t.Errorf("no response to request %v:\n%s", id, out.String())
		}
	}
}
