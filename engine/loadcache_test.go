package engine_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/agentpack/agentpack/targets"
)

// A load cache reuses a compiled state while nothing it read changed, and
// loads again after every kind of source edit the stat data can show.
func TestLoadCacheSeesEverySourceEdit(t *testing.T) {
	env := testEnv(t)
	repo := benchRepo(t, 3, 3)
	cache := engine.NewLoadCache()
	cache.Racy = 0 // the test's files are all brand new
	var reads atomic.Int64
	load := func() *engine.State {
		t.Helper()
		e := engine.New(env, targets.NewSet())
		e.Sys = engine.CountReads{e.Sys, &reads}
		e.LoadCache = cache
		reads.Store(0)
		st, err := e.Load(context.Background(), engine.Request{Repo: repo})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	fileOf := func(st *engine.State, name string) string {
		for _, f := range st.Desired.Files {
			if filepath.Base(f.Path.String()) == name && filepath.Base(filepath.Dir(f.Path.String())) == "s0001" {
				return string(f.Data)
			}
		}
		return ""
	}
	skill := filepath.Join(repo, "modules", "s0001", "SKILL.md")
	load()
	time.Sleep(10 * time.Millisecond) // later writes get later timestamps
	load()
	if n := reads.Load(); n != 0 {
		t.Fatalf("a load of an unchanged repo read %d files", n)
	}

	// Same size, modification time put back: the change time still moves.
	fi, _ := os.Stat(skill)
	old, _ := os.ReadFile(skill)
	edited := []byte(string(old[:len(old)-2]) + "X\n")
	if err := os.WriteFile(skill, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(skill, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if got := fileOf(load(), "SKILL.md"); got != string(edited) {
		t.Fatalf("after a same-size edit with its mtime put back, SKILL.md = %q", got)
	}

	// A new file in a skill folder.
	time.Sleep(10 * time.Millisecond)
	if err := os.WriteFile(filepath.Join(repo, "modules", "s0001", "new.md"), []byte("new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := fileOf(load(), "new.md"); got != "new\n" {
		t.Fatalf("a new file in a skill folder was not seen: %q", got)
	}

	// A module removed from agentpack.yaml.
	time.Sleep(10 * time.Millisecond)
	m := filepath.Join(repo, "agentpack.yaml")
	data, _ := os.ReadFile(m)
	lines := string(data)
	cut := lines[:len(lines)-1]
	cut = cut[:len(cut)-len(cut[lastNL(cut)+1:])]
	if err := os.WriteFile(m, []byte(cut), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := len(load().Modules); got != 2 {
		t.Fatalf("after removing a module, %d modules load", got)
	}

	// A file replaced by another (rename over it: new inode).
	time.Sleep(10 * time.Millisecond)
	tmp := skill + ".tmp"
	if err := os.WriteFile(tmp, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, skill); err != nil {
		t.Fatal(err)
	}
	load()
	if reads.Load() == 0 {
		t.Fatal("a file replaced by a rename was not re-read")
	}
}

func lastNL(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '\n' {
			return i
		}
	}
	return -1
}

// A file modified right before the load is not trusted by its stat data:
// the state is not cached. Once the default window (100 ms) has passed,
// it is.
func TestLoadCacheSkipsRacyFiles(t *testing.T) {
	env := testEnv(t)
	repo := benchRepo(t, 2, 2)
	cache := engine.NewLoadCache()
	var reads atomic.Int64
	loadTwice := func() int64 {
		t.Helper()
		var n int64
		for range 2 {
			e := engine.New(env, targets.NewSet())
			e.Sys = engine.CountReads{e.Sys, &reads}
			e.LoadCache = cache
			reads.Store(0)
			if _, err := e.Load(context.Background(), engine.Request{Repo: repo}); err != nil {
				t.Fatal(err)
			}
			n = reads.Load()
		}
		return n // the second load's
	}
	cache.Racy = time.Minute // every file was just written
	if loadTwice() == 0 {
		t.Fatal("a state loaded from files changed within the racy window was reused")
	}
	cache.Racy = engine.NewLoadCache().Racy
	time.Sleep(cache.Racy + 50*time.Millisecond)
	if n := loadTwice(); n != 0 {
		t.Fatalf("%v after the files were written, the second load read %d files (the first one's state was not kept)", cache.Racy+50*time.Millisecond, n)
	}
}

// countStats counts the stat calls made through it.
type countStats struct {
	fsys.System
	n *atomic.Int64
}

func (c countStats) Lstat(p fsys.AbsPath) (fs.FileInfo, error) {
	c.n.Add(1)
	return c.System.Lstat(p)
}

func (c countStats) Stat(p fsys.AbsPath) (fs.FileInfo, error) {
	c.n.Add(1)
	return c.System.Stat(p)
}

// With a watcher, a hit is trusted without a stat of each path while
// nothing was heard, and an edit is heard: the next load sees it without
// waiting for the stat re-check.
func TestLoadCacheWatcherInvalidates(t *testing.T) {
	env := testEnv(t)
	repo := benchRepo(t, 3, 3)
	cache := engine.NewLoadCache()
	cache.Racy, cache.Watch, cache.Recheck = 0, true, time.Hour // only the watcher can tell
	defer cache.Close()
	var stats, reads atomic.Int64
	load := func() *engine.State {
		t.Helper()
		e := engine.New(env, targets.NewSet())
		e.Sys = engine.CountReads{countStats{e.Sys, &stats}, &reads}
		e.LoadCache = cache
		st, err := e.Load(context.Background(), engine.Request{Repo: repo})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	load()
	stats.Store(0)
	reads.Store(0)
	load()
	if s, r := stats.Load(), reads.Load(); s > 1 || r != 0 {
		t.Fatalf("a watched hit made %d stats and %d reads (want none of the repo's)", s, r)
	}
	skill := filepath.Join(repo, "modules", "s0001", "SKILL.md")
	if err := os.WriteFile(skill, []byte("---\nname: s0001\ndescription: edited\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The event arrives asynchronously: poll until the load sees it.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if desc := skillData(load(), "s0001"); strings.Contains(desc, "edited") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the watcher never invalidated the cached state after an edit")
		}
	}
}

func skillData(st *engine.State, skill string) string {
	for _, f := range st.Desired.Files {
		if filepath.Base(f.Path.String()) == "SKILL.md" && filepath.Base(filepath.Dir(f.Path.String())) == skill {
			return string(f.Data)
		}
	}
	return ""
}

// A watching cache answers status over an unchanged disk without reading
// or stat'ing anything, and the answer follows an edited target file and
// an edited source as soon as the watcher hears them.
func TestLoadCacheMemoizesStatus(t *testing.T) {
	env, repo, cached := watchedStatus(t, 0) // only the watcher can tell
	req := engine.Request{Repo: repo}
	var stats, reads int64
	status := func() *engine.StatusData {
		t.Helper()
		var s *engine.StatusData
		s, stats, reads = cached()
		return s
	}
	// The stat cache learns the deployed files once they are old enough
	// (a status that saves it is not memoized: it changed what it read),
	// so the answer is memoized within a few calls.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if s := status(); len(s.Drift) != 0 {
			t.Fatalf("drift over an unchanged disk: %+v", s.Drift)
		}
		if stats <= 1 && reads == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("status is never memoized: %d stats and %d reads", stats, reads)
		}
	}
	until := func(what string, ok func(*engine.StatusData) bool) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); !ok(status()); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("status never showed %s", what)
			}
		}
	}
	kind := func(k string) func(*engine.StatusData) bool {
		return func(s *engine.StatusData) bool { return len(s.Drift) > 0 && s.Drift[0].Kind == k }
	}
	deployed := filepath.Join(env.Cwd, ".agents", "skills", "s0001", "SKILL.md")
	if err := os.WriteFile(deployed, []byte("edited by hand\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	until("the edited target file", kind(engine.DriftModified))
	if err := os.WriteFile(deployed, []byte(skillData(status2(t, env, req), "s0001")), 0o644); err != nil {
		t.Fatal(err)
	}
	until("the target file put back", func(s *engine.StatusData) bool { return len(s.Drift) == 0 })
	if err := os.WriteFile(filepath.Join(repo, "modules", "s0002", "SKILL.md"), []byte("---\nname: s0002\ndescription: new\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	until("the edited source", kind(engine.DriftPending))
}

// status2 is the state a fresh engine without caches loads.
func status2(t *testing.T, env engine.Env, req engine.Request) *engine.State {
	t.Helper()
	st, err := engine.New(env, targets.NewSet()).Load(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// A watching cache keeps a status answer even though computing it wrote
// the stat cache: agentpack's own caches are not in the answer's
// fingerprint, so they are never too recent for it (with them in, an MCP
// client calling status more often than the racy window recomputed every
// call: 43 ms at 10,000 files instead of 0.2).
func TestLoadCacheMemoizesStatusDespiteItsStatCache(t *testing.T) {
	_, _, status := watchedStatus(t, 500*time.Millisecond)
	time.Sleep(600 * time.Millisecond) // the repo and the deployed files are old enough
	for call := 1; call <= 3; call++ {
		if _, stats, reads := status(); call == 3 && (stats > 1 || reads != 0) {
			t.Fatalf("the third status in a row made %d stats and %d reads: no answer was kept", stats, reads)
		}
	}
}

// watchedStatus deploys a small repo into a new env and returns them with
// a status through a watching load cache (racy: its racy window), which
// also says how many stats and reads the call made.
func watchedStatus(t *testing.T, racy time.Duration) (engine.Env, string, func() (*engine.StatusData, int64, int64)) {
	t.Helper()
	env := testEnv(t)
	repo := benchRepo(t, 3, 3)
	req := engine.Request{Repo: repo}
	if _, _, err := engine.New(env, targets.NewSet()).Deploy(context.Background(), req, true, engine.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	cache := engine.NewLoadCache()
	cache.Racy, cache.Watch, cache.Recheck = racy, true, time.Hour
	t.Cleanup(func() { cache.Close() })
	return env, repo, func() (*engine.StatusData, int64, int64) {
		t.Helper()
		var stats, reads atomic.Int64
		e := engine.New(env, targets.NewSet())
		e.Sys = engine.CountReads{countStats{e.Sys, &stats}, &reads}
		e.LoadCache = cache
		_, s, err := e.Status(context.Background(), req, nil)
		if err != nil {
			t.Fatal(err)
		}
		return s, stats.Load(), reads.Load()
	}
}

// A load cache keeps, for plan, status, diff and deploy, the compiled
// state without the bytes of files copied from sources, and without the
// modules (a server holds no copy of the repo); those commands read the
// bytes they write or show, and a full load still has both.
func TestLoadCacheKeepsNoCopiedBytesForCompiledCommands(t *testing.T) {
	env := testEnv(t)
	repo := codexRepo(t)
	cache := engine.NewLoadCache()
	cache.Racy = 0
	e := engine.New(env, targets.NewSet())
	e.LoadCache = cache
	ctx := context.Background()
	req := engine.Request{Repo: repo}
	held := func(st *engine.State) (copied, withBytes int) {
		for _, f := range st.Desired.Files {
			if f.HasSrc() && f.Keyed == nil {
				copied++
				if f.Data != nil {
					withBytes++
				}
			}
		}
		return copied, withBytes
	}
	for range 2 { // loaded, then from the cache
		st, _, err := e.Plan(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if copied, withBytes := held(st); copied == 0 || withBytes != 0 || st.Modules != nil {
			t.Fatalf("plan's state: %d of %d copied files hold bytes, modules %v", withBytes, copied, st.Modules != nil)
		}
	}
	shown := diffShown(t, e, req)
	if !strings.Contains(shown, "+x\n") || !strings.Contains(shown, "+body\n") {
		t.Errorf("the diff does not show the new files' bytes:\n%s", shown)
	}
	if _, _, err := e.Deploy(ctx, req, true, engine.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, filepath.Join(env.Cwd, ".agents/skills/s/extra.txt")); got != "x\n" {
		t.Errorf("extra.txt = %q", got)
	}
	full, err := e.Load(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if copied, withBytes := held(full); withBytes != copied || full.Modules == nil {
		t.Errorf("a full load: %d of %d copied files hold bytes, modules %v", withBytes, copied, full.Modules != nil)
	}
}

// serverWorld is a repo of skills planned, as the MCP server plans, through
// one LoadCache, by engines that note the files they read of it and count
// its reads and listings.
type serverWorld struct {
	t     *testing.T
	env   engine.Env
	repo  string
	cache *engine.LoadCache
	mu    sync.Mutex
	read  []string
	looks atomic.Int64
}

func newServerWorld(t *testing.T) *serverWorld {
	w := &serverWorld{t: t, env: testEnv(t), repo: benchRepo(t, 4, 3), cache: engine.NewLoadCache()}
	w.cache.Racy = 0 // the test's files are all brand new
	return w
}

// plan is a plan through the cache, as JSON, with its state; read and
// looks start again from it.
func (w *serverWorld) plan() (string, *engine.State) {
	w.t.Helper()
	w.read = nil
	w.looks.Store(0)
	e := engine.New(w.env, targets.NewSet())
	e.Sys = namedReads{System: sourceReads{e.Sys, fsys.AbsPath(w.repo), &w.looks}, below: fsys.AbsPath(w.repo), mu: &w.mu, read: &w.read}
	e.LoadCache = w.cache
	return w.planWith(e)
}

// agrees fails unless got is the plan a load without a cache makes.
func (w *serverWorld) agrees(got string) {
	w.t.Helper()
	if want, _ := w.planWith(engine.New(w.env, targets.NewSet())); got != want {
		w.t.Errorf("plan through the cache\n%s\nwithout a cache\n%s", got, want)
	}
}

func (w *serverWorld) planWith(e *engine.Engine) (string, *engine.State) {
	w.t.Helper()
	st, p, err := e.Plan(context.Background(), engine.Request{Repo: w.repo})
	if err != nil {
		w.t.Fatal(err)
	}
	out, _ := json.Marshal(p)
	return string(out), st
}

// After a file is saved by rename (so the state is loaded again, not
// patched), the server's next load reads that file again (and the
// modules' main files, parsed), not every file it only hashes: their
// hashes come from the entry the edit made out of date.
func TestLoadCacheRereadsOnlyEditedFiles(t *testing.T) {
	w := newServerWorld(t)
	w.plan()
	edited := filepath.Join(w.repo, "modules", "s0002", "ref", "f01.md")
	time.Sleep(10 * time.Millisecond) // later writes get later timestamps
	saveByRename(t, edited, "edited\n")
	got, _ := w.plan()
	loadedAgain(t, w.read, w.repo)
	onlyEditedRead(t, w.read, edited)
	w.agrees(got)
}

// After an in-place edit of a file the state only copies, the server
// patches the state it holds: the next load reads just that file and
// lists no folder, agrees with a load without the cache, leaves the state
// an earlier call took as it was, and keeps the patched one, so the call
// after it reads nothing.
func TestLoadCachePatchesEditsOfCopiedFiles(t *testing.T) {
	w := newServerWorld(t)
	_, before := w.plan()
	held := map[string]string{}
	for _, f := range before.Desired.Files {
		held[f.Path.String()] = f.SHA256
	}
	edited := filepath.Join(w.repo, "modules", "s0002", "ref", "f01.md")
	time.Sleep(10 * time.Millisecond) // later writes get later timestamps
	appendLine(t, edited, "one more line")
	got, _ := w.plan()
	if len(w.read) != 1 || w.read[0] != edited || w.looks.Load() != 1 {
		t.Errorf("the load after the edit read %v (%d reads and listings in all), want just %s", w.read, w.looks.Load(), edited)
	}
	w.agrees(got)
	for _, f := range before.Desired.Files {
		if held[f.Path.String()] != f.SHA256 {
			t.Errorf("the patch changed the state an earlier call holds: %s", f.Path)
		}
	}
	w.plan()
	if n := w.looks.Load(); n != 0 {
		t.Errorf("the call after the patch read or listed %d paths of the repo: the patched state was not kept", n)
	}
}
