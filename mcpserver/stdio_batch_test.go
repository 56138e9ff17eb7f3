package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// runStdioLines feeds lines to ServeStdio, closes stdin, and returns the
// ids answered, the output and how long serving took.
func runStdioLines(t *testing.T, s *Server, lines ...string) (map[float64]bool, string, time.Duration) {
	t.Helper()
	var out bytes.Buffer
	start := time.Now()
	done := make(chan error, 1)
	go func() {
		done <- s.ServeStdio(context.Background(), strings.NewReader(strings.Join(lines, "\n")+"\n"), &out)
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ServeStdio ended the session with an error (the process exits non-zero): %v", err)
		}
	case <-time.After(90 * time.Second):
		t.Fatal("ServeStdio did not return")
	}
	ids := map[float64]bool{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var msg map[string]any
		if json.Unmarshal([]byte(line), &msg) == nil {
			if id, ok := msg["id"].(float64); ok {
				ids[id] = true
			}
		}
	}
	return ids, out.String(), time.Since(start)
}

// TestStdioBatchKeepsServing: a batch line (empty, malformed, or with
// invalid elements) is answered with a JSON-RPC error and the session goes
// on; the SDK would end the session (exit 1) on any of them.
func TestStdioBatchKeepsServing(t *testing.T) {
	for _, batch := range []string{
		`[]`,
		`[1]`,
		`[{"jsonrpc":"2.0","id":7,"method":"ping"},{"foo":1}]`,
		`[{"jsonrpc":"1.0","id":7,"method":"ping"}]`,
	} {
		t.Run(batch, func(t *testing.T) {
			te := newTestEnv(t)
			ids, out, took := runStdioLines(t, te.server(t),
				initLine,
				`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
				batch,
				`{"jsonrpc":"2.0","id":4,"method":"ping"}`,
			)
			if !ids[4] {
				t.Errorf("request after the batch line %s was never answered (took %s):\n%s", batch, took, out)
			}
			if !strings.Contains(out, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,`) {
				t.Errorf("batch line %s not answered with -32600, id null:\n%s", batch, out)
			}
		})
	}
}

// TestStdioWellFormedBatchKeepsServing: after 2025-06-18+ is negotiated the
// SDK ends the session on any batch ("JSON-RPC batching is not supported");
// the gate refuses batches before the SDK sees them.
func TestStdioWellFormedBatchKeepsServing(t *testing.T) {
	te := newTestEnv(t)
	ss := startStdio(t, context.Background(), te.server(t))
	ss.send(initLine)
	ss.recv()
	ss.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	ss.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	ss.recv()
	ss.send(`[{"jsonrpc":"2.0","id":3,"method":"ping"}]`)
	select {
	case err := <-ss.done:
		t.Fatalf("a batch line ended the stdio session: ServeStdio returned %v", err)
	case <-time.After(500 * time.Millisecond):
	}
	ss.send(`{"jsonrpc":"2.0","id":4,"method":"ping"}`)
	for {
		line := ss.recv()
		if strings.Contains(line, `"id":4`) {
			return
		}
	}
}

// TestStdioDuplicateIDAnswered: a request reusing the id of a request still
// in flight gets no answer from the SDK; the gate answers it (-32600, id
// null), so the end of stdin does not wait the whole grace period for it.
func TestStdioDuplicateIDAnswered(t *testing.T) {
	te := newTestEnv(t)
	s := te.server(t)
	entered, release := blockPlan(s)
	ss := startStdio(t, context.Background(), s)
	ss.send(initLine)
	ss.recv()
	ss.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	// An id that was answered may be used again.
	for range 2 {
		ss.send(`{"jsonrpc":"2.0","id":8,"method":"ping"}`)
		if r := ss.recv(); !strings.Contains(r, `"id":8`) || !strings.Contains(r, `"result"`) {
			t.Fatalf("a reused, answered id: %s", r)
		}
	}
	ss.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"plan","arguments":{}}}`)
	<-entered
	ss.send(`{"jsonrpc":"2.0","id":5,"method":"ping"}`)
	if r := ss.recv(); !strings.Contains(r, `"id":null`) || !strings.Contains(r, "-32600") || !strings.Contains(r, "already used") {
		t.Fatalf("a duplicate id in flight: %s", r)
	}
	start := time.Now()
	_ = ss.in.Close()
	close(release)
	if r := ss.recv(); !strings.Contains(r, `"id":5`) || !strings.Contains(r, `"result"`) {
		t.Fatalf("the first request with id 5: %s", r)
	}
	select {
	case err := <-ss.done:
		if err != nil {
			t.Fatalf("ServeStdio: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ServeStdio still waits for the duplicate's answer")
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("EOF took %s", took)
	}
}

// TestStdioMessageWithoutMethod: {"id":9} is neither a request nor a
// response; it gets -32600 instead of silence.
func TestStdioMessageWithoutMethod(t *testing.T) {
	te := newTestEnv(t)
	ids, out, _ := runStdioLines(t, te.server(t),
		initLine,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":9}`,
		`{"jsonrpc":"2.0","id":4,"method":"ping"}`,
	)
	if !ids[4] || !strings.Contains(out, `"code":-32600`) || !strings.Contains(out, "no method") {
		t.Fatalf("want -32600 for the method-less message and the next request answered:\n%s", out)
	}
}
