package mcpserver

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/targets"
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

// BenchmarkStatusToolUnchanged10k is one status call over a deployed,
// unchanged repo of 1,000 skills × 10 files: the server keeps the compiled
// state and its file watcher has heard nothing, so the call re-reads no
// source and re-stats none of them (the target files are still checked).
func BenchmarkStatusToolUnchanged10k(b *testing.B) {
	_, call := deployedStatus10k(b)
	for b.Loop() {
		call()
	}
}

// BenchmarkStatusToolAfterEdit10k is one status call after a line was
// added to a skill's reference file (untimed): the server patches the
// compiled state it keeps (the edited file read and hashed, its copy
// rehashed) instead of loading the repo again, and the status reads the
// edited target file's drift.
func BenchmarkStatusToolAfterEdit10k(b *testing.B) {
	repo, call := deployedStatus10k(b)
	edited := filepath.Join(repo, "modules", "s0500", "ref", "f01.md")
	for b.Loop() {
		b.StopTimer()
		f, err := os.OpenFile(edited, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := f.WriteString("one more line\n"); err != nil {
			b.Fatal(err)
		}
		f.Close()
		b.StartTimer()
		call()
	}
}

// deployedStatus10k deploys a repo of 1,000 skills × 10 files and returns
// it with a status call to a server of it, called once (it loads and
// caches).
func deployedStatus10k(b *testing.B) (repo string, call func()) {
	te := newTestEnv(b)
	repo = filepath.Join(b.TempDir(), "repo10k")
	var m strings.Builder
	m.WriteString("version: 1\nprofiles: {default: {include_tags: [base]}}\ntargets: {codex: {scope: project}}\nmodules:\n")
	for i := range 1000 {
		dir := filepath.Join(repo, "modules", fmt.Sprintf("s%04d", i))
		writeFile(b, filepath.Join(dir, "SKILL.md"), fmt.Sprintf("---\nname: s%04d\ndescription: skill %d\n---\nbody\n", i, i))
		for f := 1; f < 10; f++ {
			writeFile(b, filepath.Join(dir, "ref", fmt.Sprintf("f%02d.md", f)), strings.Repeat(fmt.Sprintf("line %d of %d\n", f, i), 40))
		}
		fmt.Fprintf(&m, "  - {id: \"skill:s%04d\", type: skill, tags: [base], source: {local_path: {path: modules/s%04d}}}\n", i, i)
	}
	writeFile(b, filepath.Join(repo, "agentpack.yaml"), m.String())
	req := engine.Request{Repo: repo}
	if _, _, err := engine.New(te.Env, targets.NewSet()).Deploy(context.Background(), req, true, engine.ApplyOptions{}); err != nil {
		b.Fatal(err)
	}
	time.Sleep(2100 * time.Millisecond) // the load cache trusts files older than 2s
	cs := connect(b, te.server(b, func(o *Options) { o.Defaults = req }), "2025-11-25")
	params := &mcp.CallToolParams{Name: "status", Arguments: M{}}
	call = func() {
		res, err := cs.CallTool(context.Background(), params)
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
	call()
	return repo, call
}

func writeFile(b testing.TB, path, content string) {
	b.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		b.Fatal(err)
	}
}
