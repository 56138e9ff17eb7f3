package plan

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentpack/agentpack/internal/checksum"
	"github.com/agentpack/agentpack/internal/fsys"
)

// statFixture writes n files below a temp folder, old enough to be cached,
// and returns the System, the state folder and the files.
func statFixture(t *testing.T, n int) (fsys.System, fsys.AbsPath, []fsys.AbsPath) {
	t.Helper()
	dir := t.TempDir()
	var files []fsys.AbsPath
	for i := range n {
		p := filepath.Join(dir, "root", "f"+strings.Repeat("x", i%7)+string(rune('a'+i%26)), "n"+time.Duration(i).String())
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(p), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, fsys.AbsPath(p))
	}
	time.Sleep(racyWindow + 50*time.Millisecond)
	return fsys.NewRealSystem(fsys.RealSystemOptions{}), fsys.AbsPath(filepath.Join(dir, "state")), files
}

func recordAll(t *testing.T, sys fsys.System, c *StatCache, files []fsys.AbsPath) {
	t.Helper()
	for _, f := range files {
		fi, err := sys.Lstat(f)
		if err != nil {
			t.Fatal(err)
		}
		c.Record(f, fsys.StatDataOf(fi), checksum.SHA256Hex([]byte(f)), false)
	}
}

// cached counts the files the cache loaded from state vouches for.
func cached(t *testing.T, sys fsys.System, state fsys.AbsPath, files []fsys.AbsPath) int {
	t.Helper()
	c := LoadStatCache(sys, state)
	n := 0
	for _, f := range files {
		fi, err := sys.Lstat(f)
		if err != nil {
			t.Fatal(err)
		}
		want := checksum.SHA256Hex([]byte(f))
		sha, ok := c.lookup(f, fsys.StatDataOf(fi))
		if c.vouches(f, fsys.StatDataOf(fi), want) != ok || c.vouches(f, fsys.StatDataOf(fi), strings.ToUpper(want)) {
			t.Fatalf("%s: vouches disagrees with lookup (%v)", f, ok)
		}
		if ok {
			if sha != checksum.SHA256Hex([]byte(f)) {
				t.Fatalf("%s: cached %s", f, sha)
			}
			n++
		}
	}
	return n
}

// TestStatCacheWritesDeltas: a few changes are saved as a delta beside an
// untouched base, many as a new base, and nothing at all when nothing
// changed; a reload sees every change either way.
func TestStatCacheWritesDeltas(t *testing.T) {
	sys, state, files := statFixture(t, 600)
	c := LoadStatCache(sys, state)
	recordAll(t, sys, c, files)
	c.Save()
	base := StatCachePath(state).JoinName(statBaseFile)
	delta := StatCachePath(state).JoinName(statDeltaFile)
	baseBytes, err := os.ReadFile(base.String())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(delta.String()); err == nil {
		t.Fatal("a first save wrote a delta")
	}
	if got := cached(t, sys, state, files); got != len(files) {
		t.Fatalf("after a full save %d of %d files cached", got, len(files))
	}

	// Nothing changed: nothing is written.
	c = LoadStatCache(sys, state)
	recordAll(t, sys, c, files)
	c.Save()
	if _, err := os.Stat(delta.String()); err == nil {
		t.Fatal("an unchanged cache wrote a delta")
	}

	// A few changes: a delta, the base untouched.
	c = LoadStatCache(sys, state)
	c.Forget(files[0])
	if err := os.WriteFile(files[1].String(), []byte("changed"), 0o644); err != nil {
		t.Fatal(err)
	}
	c.Save()
	if now, _ := os.ReadFile(base.String()); !bytes.Equal(now, baseBytes) {
		t.Fatal("a small change rewrote the base")
	}
	deltaFI, err := os.Stat(delta.String())
	if err != nil {
		t.Fatal(err)
	}
	if deltaFI.Size() > int64(len(baseBytes))/10 {
		t.Fatalf("a one-entry delta is %d bytes (base %d)", deltaFI.Size(), len(baseBytes))
	}
	if got := cached(t, sys, state, files); got != len(files)-2 {
		t.Fatalf("after forgetting one file and changing another, %d of %d cached", got, len(files))
	}

	// Many changes: a new base, and the old delta no longer applies.
	time.Sleep(racyWindow + 50*time.Millisecond)
	c = LoadStatCache(sys, state)
	for _, f := range files[:500] {
		c.Forget(f)
	}
	recordAll(t, sys, c, files[1:2]) // the changed file, cached again
	c.Save()
	if now, _ := os.ReadFile(base.String()); bytes.Equal(now, baseBytes) {
		t.Fatal("forgetting most entries did not write a new base")
	}
	if got := cached(t, sys, state, files); got != len(files)-500+1 {
		t.Fatalf("after forgetting 500, %d of %d cached", got, len(files))
	}
}

// Making room for the entries a deploy is about to record loses nothing:
// not what was recorded before it, not what comes after.
func TestStatCacheExpectKeepsEveryRecord(t *testing.T) {
	sys, state, files := statFixture(t, 50)
	c := LoadStatCache(sys, state)
	c.Expect(len(files))
	recordAll(t, sys, c, files)
	c.Save()
	if got := cached(t, sys, state, files); got != len(files) {
		t.Fatalf("recorded after Expect: %d of %d files cached", got, len(files))
	}
	if err := os.RemoveAll(StatCachePath(state).String()); err != nil {
		t.Fatal(err)
	}
	c = LoadStatCache(sys, state)
	recordAll(t, sys, c, files[:1])
	c.Expect(len(files))
	recordAll(t, sys, c, files[1:])
	c.Save()
	if got := cached(t, sys, state, files); got != len(files) {
		t.Fatalf("Expect between records: %d of %d files cached", got, len(files))
	}
	var none *StatCache
	none.Expect(10) // a plan without a cache
}

// TestStatCacheIgnoresDamage: a damaged, truncated or foreign base or delta
// is ignored (only speed is lost), and the next save rebuilds the cache.
func TestStatCacheIgnoresDamage(t *testing.T) {
	sys, state, files := statFixture(t, 50)
	c := LoadStatCache(sys, state)
	recordAll(t, sys, c, files)
	c.Save()
	c.Forget(files[0])
	c.Save()
	base := StatCachePath(state).JoinName(statBaseFile).String()
	delta := StatCachePath(state).JoinName(statDeltaFile).String()
	good, _ := os.ReadFile(base)
	goodDelta, _ := os.ReadFile(delta)

	for name, damage := range map[string]func(){
		"truncated base":    func() { os.WriteFile(base, good[:len(good)/2], 0o600) },
		"flipped base byte": func() { b := bytes.Clone(good); b[len(b)/2] ^= 1; os.WriteFile(base, b, 0o600) },
		"old gob format":    func() { os.WriteFile(base, []byte("\x0e\xff\x81\x04\x01\x02\xff\x82"), 0o600) },
		"another version":   func() { b := bytes.Clone(good); b[len(statBaseMagic)]++; os.WriteFile(base, b, 0o600) },
		"empty base":        func() { os.WriteFile(base, nil, 0o600) },
		"truncated delta":   func() { os.WriteFile(delta, goodDelta[:len(goodDelta)-1], 0o600) },
		"delta of another base": func() {
			os.WriteFile(delta, encodeStatFile(statDeltaMagic, 1, nil, []string{files[1].String()}), 0o600)
		},
	} {
		t.Run(name, func(t *testing.T) {
			os.WriteFile(base, good, 0o600)
			os.WriteFile(delta, goodDelta, 0o600)
			damage()
			got := cached(t, sys, state, files)
			switch {
			case strings.Contains(name, "delta"):
				if got != len(files) { // the base alone: files[0] is still in it
					t.Fatalf("with a damaged delta %d of %d cached", got, len(files))
				}
			case got != 0:
				t.Fatalf("a damaged base still vouched for %d files", got)
			}
			c := LoadStatCache(sys, state)
			recordAll(t, sys, c, files)
			c.Save()
			if got := cached(t, sys, state, files); got != len(files) {
				t.Fatalf("after a rebuild %d of %d cached", got, len(files))
			}
		})
	}
}

const manifestJSON = `{
  "schema_version": 1,
  "generated_at": "2026-01-01T00:00:00Z",
  "tool": "codex",
  "snapshot_id": "s1",
  "profile": "default",
  "repo": "/repo",
  "managed_files": [
    {"path": "a/SKILL.md", "sha256": "aa", "module_ids": ["skill:a"]},
    {"path": "a/ref/x.md", "sha256": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", "module_ids": ["skill:a"]},
    {"path": "b/SKILL.md", "sha256": "bb", "owned_sha256": "9F86D081884C7D659A2FEAA0C55AD015A3BF4F1B2B0B822CD15D6C15B0F00A08", "module_ids": []},
    {"path": "b/c.md", "sha256": "bb", "module_ids": []},
    {"path": "config.toml", "sha256": "dd", "format": "toml", "container": ["mcp_servers"],
     "entries": [{"name": "x", "sha256": "ee", "module_ids": ["mcp:x"]}, {"name": "y", "sha256": "ff"}], "created": true},
    {"path": "../escape", "sha256": "00"},
    {"path": "odd.json", "sha256": "11", "format": "yaml?", "container": ["c"]}
  ]
}
`

// TestManifestCacheMatchesParsing: a manifest read through the cache is
// exactly the one parsed from JSON, with the same warnings, on a hit as on
// a miss; an edit of the file (same size included) is seen.
func TestManifestCacheMatchesParsing(t *testing.T) {
	sys, state, _ := statFixture(t, 0)
	root := fsys.AbsPath(filepath.Dir(state.String())).JoinName("root")
	path := root.JoinName(TargetManifestName("codex")).String()
	os.MkdirAll(root.String(), 0o755)
	os.WriteFile(path, []byte(manifestJSON), 0o644)
	time.Sleep(racyWindow + 50*time.Millisecond)

	read := func(cache *StatCache) (*TargetManifest, []string) {
		var warns []string
		m := ReadTargetManifestCached(sys, nil, cache, root, "codex", func(w string) { warns = append(warns, w) })
		return m, warns
	}
	want, wantWarns := read(nil)
	if len(want.ManagedFiles) != 5 || len(wantWarns) != 2 {
		t.Fatalf("fixture: %d entries, warnings %q", len(want.ManagedFiles), wantWarns)
	}
	c := LoadStatCache(sys, state)
	if got, warns := read(c); !reflect.DeepEqual(got, want) || !reflect.DeepEqual(warns, wantWarns) {
		t.Fatalf("miss: got %+v %q", got, warns)
	}
	c.Save()
	c = LoadStatCache(sys, state)
	if m, _ := c.manifest(fsys.AbsPath(path)); m == nil {
		t.Fatal("the manifest was not cached")
	}
	if got, warns := read(c); !reflect.DeepEqual(got, want) || !reflect.DeepEqual(warns, wantWarns) {
		t.Fatalf("hit: got %+v\nwant %+v\nwarnings %q", got, want, warns)
	}

	// Same size, other content: parsed again, never the cached form.
	edited := strings.Replace(manifestJSON, `"sha256": "aa"`, `"sha256": "ab"`, 1)
	os.WriteFile(path, []byte(edited), 0o644)
	got, _ := read(LoadStatCache(sys, state))
	if got.ManagedFiles[0].SHA256 != "ab" {
		t.Fatalf("an edited manifest came from the cache: %+v", got.ManagedFiles[0])
	}
}

// TestManifestCacheKeepsGitCheck: a manifest cached while untracked, then
// committed to the project's git repository, is treated as missing.
func TestManifestCacheKeepsGitCheck(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	sys, state, _ := statFixture(t, 0)
	proj := fsys.AbsPath(filepath.Dir(state.String())).JoinName("proj")
	root := proj.JoinName(".codex")
	os.MkdirAll(root.String(), 0o755)
	path := root.JoinName(TargetManifestName("codex")).String()
	os.WriteFile(path, []byte(manifestJSON), 0o644)
	time.Sleep(racyWindow + 50*time.Millisecond)
	c := LoadStatCache(sys, state)
	if ReadTargetManifestCached(sys, NewGitTracked(sys, proj), c, root, "codex", func(string) {}) == nil {
		t.Fatal("an untracked manifest was not read")
	}
	c.Save()
	for _, args := range [][]string{{"init", "-q"}, {"add", "-f", "."}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = proj.String()
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	c = LoadStatCache(sys, state)
	if m, _ := c.manifest(fsys.AbsPath(path)); m == nil {
		t.Fatal("the manifest was not cached")
	}
	var warns []string
	if m := ReadTargetManifestCached(sys, NewGitTracked(sys, proj), c, root, "codex", func(w string) { warns = append(warns, w) }); m != nil {
		t.Fatalf("a tracked manifest was used from the cache: %+v", m)
	}
	if len(warns) != 1 || !strings.Contains(warns[0], "tracked") {
		t.Fatalf("warnings %q", warns)
	}
}

// TestReadDirCachedSeesChanges: a folder listed from the cache still shows
// every file added, removed or replaced by a folder since.
func TestReadDirCachedSeesChanges(t *testing.T) {
	sys, state, files := statFixture(t, 3)
	dir := files[0].Dir()
	names := func() []string {
		c := LoadStatCache(sys, state)
		es, err := ReadDirCached(sys, c, nil, dir)
		if err != nil {
			t.Fatal(err)
		}
		c.Save()
		var out []string
		for _, e := range es {
			kind := "f"
			if e.Dir {
				kind = "d"
			}
			out = append(out, kind+e.Name)
		}
		return out
	}
	want := []string{"f" + files[0].Base()}
	for i := 0; i < 2; i++ {
		if got := names(); !reflect.DeepEqual(got, want) {
			t.Fatalf("listing %d: %q, want %q", i, got, want)
		}
	}
	fi, _ := sys.Stat(dir)
	if _, ok := LoadStatCache(sys, state).dirs.get(sys, dir, fsys.StatDataOf(fi)); !ok {
		t.Fatal("the listing was not cached")
	}
	for _, step := range []struct {
		do   func()
		want []string
	}{
		{func() { os.WriteFile(filepath.Join(dir.String(), "extra"), nil, 0o644) }, []string{"fextra", "f" + files[0].Base()}},
		{func() { os.Remove(files[0].String()) }, []string{"fextra"}},
		{func() {
			os.Remove(filepath.Join(dir.String(), "extra"))
			os.Mkdir(filepath.Join(dir.String(), "extra"), 0o755)
		}, []string{"dextra"}},
	} {
		step.do()
		if got := names(); !reflect.DeepEqual(got, step.want) {
			t.Fatalf("got %q, want %q", got, step.want)
		}
		time.Sleep(racyWindow + 50*time.Millisecond)
		if got := names(); !reflect.DeepEqual(got, step.want) {
			t.Fatalf("cached: got %q, want %q", got, step.want)
		}
	}
}

// TestStatCacheRemovesTheLegacyFile checks that the first binary base
// replaces the gob file earlier versions left in the state folder.
func TestStatCacheRemovesTheLegacyFile(t *testing.T) {
	sys, state, files := statFixture(t, 3)
	legacy := state.JoinName(legacyStatCacheFile)
	if err := os.MkdirAll(state.String(), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(legacy.String(), []byte("old gob"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := LoadStatCache(sys, state)
	recordAll(t, sys, c, files)
	c.Save()
	if _, err := os.Stat(legacy.String()); err == nil {
		t.Error("the legacy statcache.v2.gob is still there")
	}
}

// TestStatCacheScopesKeepTheirOwnBase: a cache scoped to some roots (a
// plan's) decodes only their entries; the first time, from the shared
// base, which it leaves as it is, writing a base of its own; after that
// from its own folder only, so a plan of one project neither reads nor
// rewrites every other project's entries.
func TestStatCacheScopesKeepTheirOwnBase(t *testing.T) {
	sys, state, files := statFixture(t, 1200)
	seen := map[fsys.AbsPath]bool{}
	var roots, inScope, others []fsys.AbsPath
	for i, f := range files {
		if i%26 >= 13 {
			others = append(others, f)
			continue
		}
		inScope = append(inScope, f)
		if !seen[f.Dir()] {
			seen[f.Dir()] = true
			roots = append(roots, f.Dir())
		}
	}
	c := LoadStatCache(sys, state)
	recordAll(t, sys, c, files)
	c.Save()

	// An unscoped delta holding an entry outside the roots: others[0]
	// changed and hashed again.
	if err := os.WriteFile(others[0].String(), []byte("changed"), 0o644); err != nil {
		t.Fatal(err)
	}
	time.Sleep(racyWindow + 50*time.Millisecond)
	c = LoadStatCache(sys, state)
	recordAll(t, sys, c, others[:1])
	c.Save()
	if got := cached(t, sys, state, files); got != len(files) {
		t.Fatalf("after an unscoped delta %d of %d cached", got, len(files))
	}
	scoped := func() *StatCache {
		c := LoadStatCache(sys, state)
		c.Scope(roots)
		return c
	}
	shared := StatCachePath(state).JoinName(statBaseFile).String()
	sharedBefore, err := os.ReadFile(shared)
	if err != nil {
		t.Fatal(err)
	}

	// Scoped, the first time: the roots' entries of the shared base are
	// decoded; a change is saved as a base of the scope's own, holding
	// the scope's entries only, and the shared base is left as it was.
	c = LoadStatCache(sys, state)
	c.Scope(roots)
	c.decode()
	if len(c.entries) != len(inScope) {
		t.Fatalf("a cache scoped to %d roots decoded %d entries, want %d", len(roots), len(c.entries), len(inScope))
	}
	c.Forget(inScope[0])
	c.Save()
	own := c.base.JoinName(statBaseFile).String()
	ownBytes, err := os.ReadFile(own)
	if err != nil {
		t.Fatalf("the scope wrote no base of its own: %v", err)
	}
	n := 0
	if err := walkStatFile(ownBytes, statBaseMagic, func(path []byte, _ statEntry) {
		if !c.wanted(false)(path) {
			t.Fatalf("the scope's base holds %s, outside its roots", path)
		}
		n++
	}); err != nil {
		t.Fatal(err)
	}
	if n != len(inScope)-1 {
		t.Fatalf("the scope's base holds %d entries, want %d", n, len(inScope)-1)
	}
	if after, _ := os.ReadFile(shared); !bytes.Equal(after, sharedBefore) {
		t.Fatal("a scoped save rewrote the shared base")
	}
	if got := cachedIn(t, sys, scoped(), inScope); got != len(inScope)-1 {
		t.Fatalf("scoped: %d of %d cached, want all but the one forgotten", got, len(inScope))
	}
	if got := cached(t, sys, state, others); got != len(others) {
		t.Fatalf("unscoped: %d of the %d other entries cached", got, len(others))
	}

	// After that, the scope reads its own folder only: without the shared
	// files it still knows its entries, and a small change is a delta
	// beside its own base.
	for _, name := range []string{statBaseFile, statDeltaFile} {
		if err := os.Remove(StatCachePath(state).JoinName(name).String()); err != nil {
			t.Fatal(err)
		}
	}
	if got := cachedIn(t, sys, scoped(), inScope); got != len(inScope)-1 {
		t.Fatalf("scoped, shared base gone: %d of %d cached", got, len(inScope))
	}
	c = LoadStatCache(sys, state)
	c.Scope(roots)
	c.Forget(inScope[1])
	c.Save()
	if _, err := os.Stat(c.base.JoinName(statDeltaFile).String()); err != nil {
		t.Fatalf("a small scoped change wrote no delta: %v", err)
	}
	if got := cachedIn(t, sys, scoped(), inScope); got != len(inScope)-2 {
		t.Fatalf("after a scoped delta %d of %d cached, want all but the two forgotten", got, len(inScope))
	}

	// Scoped, many changes: a new base of the scope's, sorted, and empty.
	c = LoadStatCache(sys, state)
	c.Scope(roots)
	for _, f := range inScope {
		c.Forget(f)
	}
	c.Save()
	after, _ := os.ReadFile(own)
	prev := ""
	if err := walkStatFile(after, statBaseMagic, func(path []byte, _ statEntry) {
		if string(path) <= prev {
			t.Fatalf("the merged base has %s after %s", path, prev)
		}
		prev = string(path)
	}); err != nil {
		t.Fatal(err)
	}
	if got := cachedIn(t, sys, scoped(), inScope); got != 0 {
		t.Fatalf("after forgetting the scope's entries %d still cached", got)
	}
}

// Only the statScopesKeep scopes written most recently keep a folder: a
// project deleted long ago does not keep its entries forever.
func TestStatCacheKeepsTheNewestScopes(t *testing.T) {
	sys, state, files := statFixture(t, statScopesKeep+4)
	var last fsys.AbsPath
	for _, f := range files {
		c := LoadStatCache(sys, state)
		c.Scope([]fsys.AbsPath{f.Dir()})
		recordAll(t, sys, c, []fsys.AbsPath{f})
		c.Save()
		last = c.base
	}
	ents, err := os.ReadDir(StatCachePath(state).JoinName(statScopesDir).String())
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) > statScopesKeep {
		t.Errorf("%d scope folders kept, want at most %d", len(ents), statScopesKeep)
	}
	if _, err := os.Stat(last.JoinName(statBaseFile).String()); err != nil {
		t.Errorf("the newest scope's base is gone: %v", err)
	}
}
