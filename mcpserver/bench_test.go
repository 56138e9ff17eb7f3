package mcpserver

import (
	"bufio"
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkSpawnInitialize starts the real binary and completes the
// initialize handshake over stdio, then closes it.
func BenchmarkSpawnInitialize(b *testing.B) {
	bin := agentpackBinary(b)
	te := newTestEnv(b)
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	for b.Loop() {
		cmd := te.command(bin, "mcp", "serve", "--repo", te.Repo)
		cs, err := c.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			b.Fatal(err)
		}
		cs.Close()
	}
}

// BenchmarkToolsList measures tools/list (write tools listed) on the
// server side: one request line in, one response line out over stdio
// pipes, without a client decoding the schemas.
func BenchmarkToolsList(b *testing.B) {
	te := newTestEnv(b)
	ss := startStdio(b, context.Background(), te.server(b, allowWrite))
	ss.send(initLine)
	ss.recv()
	ss.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for b.Loop() {
		ss.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
		if r := ss.recv(); !strings.Contains(r, `"deploy_apply"`) {
			b.Fatal(r)
		}
	}
	ss.in.Close()
	<-ss.done
}

// BenchmarkToolsListClient is tools/list through the Go client, which also
// decodes every schema.
func BenchmarkToolsListClient(b *testing.B) {
	te := newTestEnv(b)
	cs := connect(b, te.server(b, allowWrite), "2025-11-25")
	for b.Loop() {
		if _, err := cs.ListTools(context.Background(), nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPlanTool measures one plan call on the quickstart fixture.
func BenchmarkPlanTool(b *testing.B) {
	te := newTestEnv(b)
	cs := connect(b, te.server(b), "2025-11-25")
	params := &mcp.CallToolParams{Name: "plan", Arguments: M{}}
	for b.Loop() {
		res, err := cs.CallTool(context.Background(), params)
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}

// BenchmarkSoakPlan10k makes 10,000 plan calls in process and reports the
// resident set size before and after (VmRSS), to catch leaks.
func BenchmarkSoakPlan10k(b *testing.B) {
	const calls = 10000
	te := newTestEnv(b)
	cs := connect(b, te.server(b), "2025-11-25")
	params := &mcp.CallToolParams{Name: "plan", Arguments: M{}}
	runtime.GC()
	before := vmRSSKiB(b)
	for b.Loop() {
		for range calls {
			res, err := cs.CallTool(context.Background(), params)
			if err != nil || res.IsError {
				b.Fatal(err, res)
			}
		}
	}
	runtime.GC()
	after := vmRSSKiB(b)
	b.ReportMetric(before, "rss-before-KiB")
	b.ReportMetric(after, "rss-after-KiB")
	b.ReportMetric(after-before, "rss-growth-KiB")
	b.ReportMetric(float64(calls)*float64(b.N)/b.Elapsed().Seconds(), "calls/s")
}

// vmRSSKiB reads VmRSS from /proc/self/status (Linux only).
func vmRSSKiB(b *testing.B) float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		b.Skip("no /proc/self/status:", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb
		}
	}
	b.Skip("no VmRSS")
	return 0
}
