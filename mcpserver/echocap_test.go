package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxResponse bounds the answer to any one call, however large its
// arguments.
const maxResponse = 64 << 10

// bigCall is one maximum-size call: a tool, its arguments, the error code
// it must fail with, and the long value it must not quote whole ("" when
// none reaches the engine).
type bigCall struct {
	name  string
	tool  string
	args  map[string]any
	code  string
	value string
}

// bigCalls are calls at the limits: arguments just under and over
// maxArgumentsBytes, strings of exactly maxStringArg characters (which
// reach the engine, whose errors quote them), and argument names and
// arrays that make the validator list many problems.
func bigCalls() []bigCall {
	s := func(c byte) string { return strings.Repeat(string(c), maxStringArg) }
	nearCap := maxArgumentsBytes - 64
	manyKeys := map[string]any{}
	for i := 0; len(manyKeys)*20 < nearCap; i++ {
		manyKeys[fmt.Sprintf("k%013d", i)] = 0
	}
	only := make([]any, nearCap/4)
	for i := range only {
		only[i] = "x"
	}
	return []bigCall{
		{"over the cap", "plan", map[string]any{"repo": strings.Repeat("r", 10<<20)}, "E_INVALID_ARGUMENT", ""},
		{"over maxLength", "plan", map[string]any{"profile": strings.Repeat("p", nearCap)}, "E_INVALID_ARGUMENT", ""},
		{"unknown name", "plan", map[string]any{strings.Repeat("k", nearCap): 1}, "E_INVALID_ARGUMENT", ""},
		{"many unknown names", "status", manyKeys, "E_INVALID_ARGUMENT", ""},
		{"many bad items", "status", map[string]any{"only": only}, "E_INVALID_ARGUMENT", ""},
		{"profile", "plan", map[string]any{"profile": s('a')}, "E_INVALID_ARGUMENT", s('a')},
		{"explain profile", "explain", map[string]any{"kind": "plan", "profile": s('b')}, "E_INVALID_ARGUMENT", s('b')},
		{"repo", "diff", map[string]any{"repo": s('c')}, "", s('c')},
		{"snapshot id", "snapshots", map[string]any{"id": s('d')}, "", s('d')},
		{"rollback to", "rollback", map[string]any{"to": s('e'), "yes": true}, "", s('e')},
		{"source spec", "source_add", map[string]any{"spec": s('f'), "yes": true}, "", s('f')},
		{"source name", "source_scan", map[string]any{"name": s('g')}, "E_SOURCE_NOT_FOUND", s('g')},
		{"resource uri", "resources", map[string]any{"action": "read", "uri": s('h')}, "", s('h')},
		{"quoted", "plan", map[string]any{"profile": strings.Repeat("\"\x01", maxStringArg/2)}, "E_INVALID_ARGUMENT", ""},
	}
}

// TestLargeArgumentsStaySmall sends 24 maximum-size calls in parallel: each
// answer stays under 64 KiB, is an isError envelope, and quotes no long
// value whole. Before, error messages and details echoed a value several
// times (a 10 MB argument gave a 73 MB response).
func TestLargeArgumentsStaySmall(t *testing.T) {
	te := newTestEnv(t)
	cs := connect(t, te.server(t, allowWrite), "2025-11-25")
	calls := bigCalls()
	var wg sync.WaitGroup
	for i := range 24 {
		c := calls[i%len(calls)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
				return
			}
			b, _ := json.Marshal(res)
			if len(b) >= maxResponse {
				t.Errorf("%s: a %d-byte response", c.name, len(b))
				return
			}
			env := checkResult(t, c.tool, res)
			if env.OK || (c.code != "" && env.code() != c.code) {
				t.Errorf("%s: want %s, got ok=%v %s: %.300s", c.name, c.code, env.OK, env.code(), env.raw)
			}
			if c.value != "" && strings.Contains(string(b), c.value[:maxEcho+1]) {
				t.Errorf("%s: the response quotes the %d-byte value whole: %.600s", c.name, len(c.value), env.raw)
			}
			if c.value != "" && strings.Contains(env.Errors[0].Message, c.value[:10]) && !strings.Contains(env.Errors[0].Message, fmt.Sprintf("…(%d bytes)", len(c.value))) {
				t.Errorf("%s: the message quotes the value without its size: %.400s", c.name, env.Errors[0].Message)
			}
		}()
	}
	wg.Wait()
}

// TestArgumentsOverTheCap: arguments over maxArgumentsBytes are refused
// before validation with E_INVALID_ARGUMENT naming the size and the limit.
func TestArgumentsOverTheCap(t *testing.T) {
	te := newTestEnv(t)
	cs := connect(t, te.server(t), "2025-11-25")
	env := callTool(t, cs, "plan", map[string]any{"repo": strings.Repeat("r", maxArgumentsBytes)})
	if env.code() != "E_INVALID_ARGUMENT" || env.Errors[0].Details["limit"] != float64(maxArgumentsBytes) {
		t.Fatalf("want E_INVALID_ARGUMENT with the limit: %s", env.raw)
	}
	if !strings.Contains(env.Errors[0].Message, "over the limit") {
		t.Fatalf("message: %s", env.Errors[0].Message)
	}
}

// TestLongNamesNotEchoed: an unknown tool, a resource URI and a prompt name
// of 1 MiB are refused with JSON-RPC errors of bounded size.
func TestLongNamesNotEchoed(t *testing.T) {
	te := newTestEnv(t)
	cs := connect(t, te.server(t), "2025-11-25")
	long := strings.Repeat("n", 1<<20)
	ctx := context.Background()
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: long})
	if err == nil || len(err.Error()) > 1024 || !strings.Contains(err.Error(), "unknown tool") {
		t.Errorf("unknown tool: %.300v (%d bytes)", err, len(fmt.Sprint(err)))
	}
	for _, uri := range []string{"agentpack://" + long, "agentpack://modules/skill:x/" + long, "agentpack://sources/" + long} {
		_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err == nil || len(err.Error()) > 1024 {
			t.Errorf("resources/read of %.40s…: %.300v (%d bytes)", uri, err, len(fmt.Sprint(err)))
		}
	}
	mid := "agentpack://sources/" + strings.Repeat("s", maxStringArg-40)
	_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: mid})
	if err == nil || len(err.Error()) > 1024 {
		t.Errorf("resources/read of a %d-byte URI: %.300v (%d bytes)", len(mid), err, len(fmt.Sprint(err)))
	}
	_, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: long[:maxStringArg]})
	if err == nil || len(err.Error()) > 1024 {
		t.Errorf("prompts/get: %.300v (%d bytes)", err, len(fmt.Sprint(err)))
	}
}

// TestCapEcho: long values are cut at a rune boundary and say their size.
func TestCapEcho(t *testing.T) {
	if got := capEcho("short"); got != "short" {
		t.Errorf("capEcho(short) = %q", got)
	}
	long := strings.Repeat("é", maxEcho) // 2 bytes a rune
	got := capEcho(long)
	if want := strings.Repeat("é", maxEcho/2) + fmt.Sprintf("…(%d bytes)", len(long)); got != want {
		t.Errorf("capEcho = %q, want %q", got, want)
	}
	odd := "x" + long
	if got := capEcho(odd); !strings.HasPrefix(got, "x"+strings.Repeat("é", maxEcho/2-1)+"…(") {
		t.Errorf("capEcho cuts inside a rune: %q", got)
	}
}

// BenchmarkLargeArguments measures one maximum-size call that fails
// validation (an unknown argument with a name just under the cap).
func BenchmarkLargeArguments(b *testing.B) {
	te := newTestEnv(b)
	cs := connect(b, te.server(b), "2025-11-25")
	args := map[string]any{strings.Repeat("k", maxArgumentsBytes-64): 1}
	b.ReportAllocs()
	for b.Loop() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "plan", Arguments: args})
		if err != nil || !res.IsError {
			b.Fatal(err)
		}
	}
}
