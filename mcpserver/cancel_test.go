package mcpserver

import (
	"context"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// toolLog is a slog handler that hands each "tool call" record's tool and
// code to a channel.
type toolLog struct {
	calls chan [2]string
}

func (h *toolLog) Enabled(context.Context, slog.Level) bool { return true }
func (h *toolLog) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *toolLog) WithGroup(string) slog.Handler            { return h }
func (h *toolLog) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "tool call" {
		return nil
	}
	var tool, code string
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "tool":
			tool = a.Value.String()
		case "code":
			code = a.Value.String()
		}
		return true
	})
	h.calls <- [2]string{tool, code}
	return nil
}

// TestCancelledCallStopsClone: a client that cancels a source_add (the SDK
// sends notifications/cancelled) ends the server's clone from a stalled
// remote at once, not after the git timeout.
func TestCancelledCallStopsClone(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan net.Conn, 8)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c // never answered: the TLS handshake stalls
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		for len(accepted) > 0 {
			(<-accepted).Close()
		}
	})

	te := newTestEnv(t)
	te.Env.GitTimeout, te.Env.GitRetries = "10m", "0"
	logs := &toolLog{calls: make(chan [2]string, 8)}
	cs := connect(t, te.server(t, allowWrite, func(o *Options) { o.Logger = slog.New(logs) }), "2025-11-25")

	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		_, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: "source_add",
			Arguments: map[string]any{"spec": "https://" + ln.Addr().String() + "/org/skills.git", "yes": true}})
	}()
	select {
	case c := <-accepted:
		accepted <- c
	case <-time.After(20 * time.Second):
		t.Fatal("the clone never connected")
	}
	cancel()
	select {
	case call := <-logs.calls:
		if call[0] != "source_add" || call[1] == "" {
			t.Fatalf("want a failed source_add, got %v", call)
		}
	case <-time.After(20 * time.Second): // a liveness bound, far below the 10 min git timeout set above
		t.Fatal("the cancelled source_add is still running")
	}
}

// TestShutdownCancelsStalledClone: SIGINT/SIGTERM (the serve context ends)
// cancels a source_add stuck on a stalled remote; the call is answered and
// the server returns, long before the git timeout.
func TestShutdownCancelsStalledClone(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan net.Conn, 8)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		for len(accepted) > 0 {
			(<-accepted).Close()
		}
	})
	te := newTestEnv(t)
	te.Env.GitTimeout, te.Env.GitRetries = "10m", "0"
	ctx, cancel := context.WithCancel(context.Background())
	ss := startStdio(t, ctx, te.server(t, allowWrite))
	ss.send(initLine)
	ss.recv()
	ss.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	ss.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"source_add","arguments":{"spec":"https://` + ln.Addr().String() + `/org/skills.git","yes":true}}}`)
	select {
	case c := <-accepted:
		accepted <- c
	case <-time.After(20 * time.Second):
		t.Fatal("the clone never connected")
	}
	cancel()
	if r := ss.recv(); !strings.Contains(r, `"id":2`) || !strings.Contains(r, `"isError":true`) {
		t.Fatalf("the cancelled call was not answered with an error: %s", r)
	}
	select {
	case err := <-ss.done:
		if err != nil {
			t.Fatalf("ServeStdio: %v", err)
		}
	case <-time.After(20 * time.Second): // a liveness bound, far below the 10 min git timeout
		t.Fatal("ServeStdio did not return")
	}
}
