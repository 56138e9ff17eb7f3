package engine_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/agentpack/agentpack/targets"
)

// sourceReads counts the files read and folders listed below one folder.
type sourceReads struct {
	fsys.System
	below fsys.AbsPath
	n     *atomic.Int64
}

func (c sourceReads) ReadFile(p fsys.AbsPath) ([]byte, error) {
	if c.below.Contains(p) {
		c.n.Add(1)
	}
	return c.System.ReadFile(p)
}

func (c sourceReads) ReadDir(p fsys.AbsPath) ([]fs.DirEntry, error) {
	if c.below.Contains(p) {
		c.n.Add(1)
	}
	return c.System.ReadDir(p)
}

// cacheWorld is a repo of skills and an MCP server for two targets, with
// engines that count what they read of it.
type cacheWorld struct {
	t     *testing.T
	env   engine.Env
	repo  string
	req   engine.Request
	reads atomic.Int64
}

func newCacheWorld(t *testing.T) *cacheWorld {
	t.Helper()
	w := &cacheWorld{t: t, env: testEnv(t), repo: benchRepo(t, 6, 3)}
	// From a subfolder of the project, so finding the project root checks
	// a path that does not exist (sub/.git).
	w.env.Cwd = filepath.Join(w.env.Cwd, "sub")
	if err := os.MkdirAll(w.env.Cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	w.req = engine.Request{Repo: w.repo}
	m := filepath.Join(w.repo, "agentpack.yaml")
	data, err := os.ReadFile(m)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(data), "targets: {codex: {scope: project}}", "targets: {codex: {scope: project}, claude_code: {scope: user}}", 1) +
		"  - {id: \"mcp:gh\", type: mcp, tags: [base], source: {local_path: {path: modules/mcp/gh.yaml}}}\n"
	mustWrite(t, m, text)
	mustWrite(t, filepath.Join(w.repo, "modules", "mcp", "gh.yaml"), ghServer)
	return w
}

// engine is an engine over the real disk, counting source reads, with the
// source cache when cached.
func (w *cacheWorld) engine(cached bool) *engine.Engine {
	e := engine.New(w.env, targets.NewSet())
	e.Sys = sourceReads{e.Sys, fsys.AbsPath(w.repo), &w.reads}
	if cached {
		e.SourceCache = &engine.SourceCache{Build: "test"}
	}
	return e
}

// outputs are the plan and status JSON of e.
func (w *cacheWorld) outputs(e *engine.Engine) (planJSON, statusJSON string) {
	w.t.Helper()
	_, p, err := e.Plan(context.Background(), w.req)
	if err != nil {
		w.t.Fatal(err)
	}
	_, s, err := e.Status(context.Background(), w.req, nil)
	if err != nil {
		w.t.Fatal(err)
	}
	pj, _ := json.Marshal(p)
	sj, _ := json.Marshal(s)
	return string(pj), string(sj)
}

// warm fills the cache and checks the next plan reads no source file.
func (w *cacheWorld) warm() {
	w.t.Helper()
	time.Sleep(150 * time.Millisecond) // past the racy window of the last edit
	w.outputs(w.engine(true))
	w.reads.Store(0)
	w.outputs(w.engine(true))
	if n := w.reads.Load(); n != 0 {
		w.t.Fatalf("plan and status over an unchanged repo read or listed %d source paths", n)
	}
}

// same checks that cached and uncached plan and status agree, and that the
// cached run had to read sources again.
func (w *cacheWorld) same(what string) {
	w.t.Helper()
	w.reads.Store(0)
	cp, cs := w.outputs(w.engine(true))
	if w.reads.Load() == 0 {
		w.t.Errorf("%s: the cached state was reused", what)
	}
	up, us := w.outputs(w.engine(false))
	if cp != up {
		w.t.Errorf("%s: plan with the cache\n%s\nwithout\n%s", what, cp, up)
	}
	if cs != us {
		w.t.Errorf("%s: status with the cache\n%s\nwithout\n%s", what, cs, us)
	}
}

func (w *cacheWorld) deploy(e *engine.Engine) *engine.DeployData {
	w.t.Helper()
	_, d, err := e.Deploy(context.Background(), w.req, true, engine.ApplyOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	return d
}

// status, plan, diff and a no-op deploy over an unchanged repo neither
// read nor list a source file: the compiled state comes from the cache.
func TestSourceCacheSkipsUnchangedSources(t *testing.T) {
	w := newCacheWorld(t)
	w.deploy(w.engine(true))
	w.warm()
	// git at work in the project: agentpack only asked whether .git exists.
	mustWrite(t, filepath.Join(filepath.Dir(w.env.Cwd), ".git", "index"), "git index\n")
	ctx := context.Background()
	w.reads.Store(0)
	e := w.engine(true)
	if _, _, err := e.Diff(ctx, w.req); err != nil {
		t.Fatal(err)
	}
	if d := w.deploy(e); d.Applied {
		t.Fatalf("a deploy of an unchanged repo applied %+v", d.Summary)
	}
	ro := w.engine(true)
	ro.ReadOnly()
	if _, _, err := ro.Status(ctx, w.req, nil); err != nil {
		t.Fatal(err)
	}
	dry := w.engine(true)
	dry.Sys = fsys.NewDryRunSystem(dry.Sys)
	if _, _, err := dry.Plan(ctx, w.req); err != nil {
		t.Fatal(err)
	}
	if n := w.reads.Load(); n != 0 {
		t.Fatalf("diff, deploy, read-only status and dry-run plan read or listed %d source paths", n)
	}
	cp, cs := w.outputs(w.engine(true))
	up, us := w.outputs(w.engine(false))
	if cp != up || cs != us {
		t.Fatalf("the cached state plans differently:\n%s\n%s\nwithout the cache:\n%s\n%s", cp, cs, up, us)
	}
}

// The cache keeps a copied source file's path and hash, not its bytes: a
// diff and a deploy from a warm cache read the bytes of the files they
// write, and what lands on disk is byte for byte what a cache-less run
// compiles.
func TestSourceCacheKeepsHashesNotBytes(t *testing.T) {
	w := newCacheWorld(t)
	w.warm()
	src, err := os.ReadFile(filepath.Join(w.repo, "modules", "s0001", "ref", "f01.md"))
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(w.env.CacheDir(), "load", "*.bin"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no cache file: %v", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), string(src)) {
			t.Fatalf("%s holds the bytes of a copied source file", f)
		}
	}
	ctx := context.Background()
	w.reads.Store(0)
	_, d, err := w.engine(true).Diff(ctx, w.req)
	if err != nil {
		t.Fatal(err)
	}
	var shown bool
	for _, c := range d.Changes {
		shown = shown || strings.Contains(c.Unified.String(), "+"+strings.SplitN(string(src), "\n", 2)[0])
	}
	if !shown || w.reads.Load() == 0 {
		t.Fatalf("the diff from a warm cache does not show the source's bytes (%d source reads)", w.reads.Load())
	}
	if dd := w.deploy(w.engine(true)); !dd.Applied {
		t.Fatal("the deploy from a warm cache applied nothing")
	}
	_, p, err := w.engine(false).Plan(ctx, w.req)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Changes) != 0 {
		t.Fatalf("after a deploy from the cache, a cache-less plan still changes %d files: %+v", len(p.Changes), p.Changes[0])
	}

	// A load with nothing cached lets go of copied bytes once hashed; its
	// deploy reads them again and writes the same bytes.
	cold := newCacheWorld(t)
	if dd := cold.deploy(cold.engine(true)); !dd.Applied {
		t.Fatal("a cold deploy applied nothing")
	}
	if _, p, err := cold.engine(false).Plan(ctx, cold.req); err != nil || len(p.Changes) != 0 {
		t.Fatalf("after a cold deploy through the cache, a cache-less plan: %v, %+v", err, p)
	}
}
