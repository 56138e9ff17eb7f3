package plan

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/agentpack/agentpack/engine/desired"
	"github.com/agentpack/agentpack/engine/target"

	"github.com/agentpack/agentpack/internal/bincodec"
	"github.com/agentpack/agentpack/internal/fsys"
)

// TestStatCacheKeysClash: base entries are found by a hash of their path;
// two paths of the base with one key are both left out (looked up, they
// are hashed again and recorded by path), so neither is answered with the
// other's entry, and a new base still holds both.
func TestStatCacheKeysClash(t *testing.T) {
	sys, state, files := statFixture(t, 3)
	c := LoadStatCache(sys, state)
	recordAll(t, sys, c, files)
	c.Save()
	if got := cached(t, sys, state, files); got != 3 {
		t.Fatalf("%d of 3 cached", got)
	}
	keyOf := pathKeyOf
	defer func() { pathKeyOf = keyOf }()
	pathKeyOf = func(path string) uint64 { // files[0] and files[1] share a key
		if path == files[1].String() {
			path = files[0].String()
		}
		return keyOf(path)
	}
	if got := cached(t, sys, state, files); got != 1 {
		t.Fatalf("with two keys clashing %d of 3 cached, want 1", got)
	}
	// Recorded again, the two are found by path; forgetting the third
	// makes a new base, merged from the old one, that holds the two.
	c = LoadStatCache(sys, state)
	recordAll(t, sys, c, files[:2])
	c.Forget(files[2])
	if got := cachedIn(t, sys, c, files); got != 2 {
		t.Fatalf("recorded again %d of 3 cached, want 2", got)
	}
	c.Save()
	pathKeyOf = keyOf
	if got := cached(t, sys, state, files); got != 2 {
		t.Fatalf("after the save %d of 3 cached, want 2", got)
	}
}

// cachedIn counts the files c vouches for.
func cachedIn(t *testing.T, sys fsys.System, c *StatCache, files []fsys.AbsPath) int {
	t.Helper()
	n := 0
	for _, f := range files {
		d, err := fsys.LstatData(sys, f)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := c.lookup(f, d); ok {
			n++
		}
	}
	return n
}

// TestStatCacheNewBaseMerges: a new base is the old base file merged with
// what changed: entries recorded since are in it, forgotten ones are not,
// the others are kept as they were.
func TestStatCacheNewBaseMerges(t *testing.T) {
	sys, state, files := statFixture(t, 600)
	c := LoadStatCache(sys, state)
	recordAll(t, sys, c, files[:300])
	c.Save()
	c = LoadStatCache(sys, state)
	recordAll(t, sys, c, files[300:]) // past a delta's size: a new base
	for _, f := range files[:100] {
		c.Forget(f)
	}
	c.Save()
	if _, err := os.Stat(filepath.Join(StatCachePath(state).String(), statDeltaFile)); err == nil {
		t.Fatal("a delta was written, not a new base")
	}
	for i, part := range [][]fsys.AbsPath{files[:100], files[100:300], files[300:]} {
		want := []int{0, 200, 300}[i]
		if got := cached(t, sys, state, part); got != want {
			t.Fatalf("part %d: %d cached, want %d", i, got, want)
		}
	}
}

// TestFolderCacheMergesOnSave: a save keeps the listings of the file read
// that were not recorded again, replaces those that were and drops those
// forgotten, in path order so the next load finds each one.
func TestFolderCacheMergesOnSave(t *testing.T) {
	sys, state, files := statFixture(t, 40)
	dirs := map[fsys.AbsPath]bool{}
	for _, f := range files {
		dirs[f.Dir()] = true
	}
	listAll := func() *StatCache {
		c := LoadStatCache(sys, state)
		for d := range dirs {
			if _, err := ReadDirCached(sys, c, nil, d); err != nil {
				t.Fatal(err)
			}
		}
		c.Save()
		return c
	}
	listAll()
	var some []fsys.AbsPath
	for d := range dirs {
		some = append(some, d)
	}
	changed, forgotten := some[0], some[1]
	if err := os.WriteFile(filepath.Join(changed.String(), "new"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	time.Sleep(racyWindow + 50*time.Millisecond)
	c := LoadStatCache(sys, state)
	if _, err := ReadDirCached(sys, c, nil, changed); err != nil {
		t.Fatal(err)
	}
	c.dirs.put(sys, forgotten, nil, nil)
	if fi, err := fsys.StatDataFollow(sys, forgotten); err != nil {
		t.Fatal(err)
	} else if _, ok := c.dirs.get(sys, forgotten, fi); ok {
		t.Fatal("a forgotten listing is still used")
	}
	c.Save()
	c = LoadStatCache(sys, state)
	for d := range dirs {
		fi, err := fsys.StatDataFollow(sys, d)
		if err != nil {
			t.Fatal(err)
		}
		data, ok := c.dirs.get(sys, d, fi)
		if ok != (d != forgotten) {
			t.Fatalf("%s cached: %v", d, ok)
		}
		if !ok {
			continue
		}
		got, err := decodeDirEntries(data)
		want, _ := readDir(sys, d)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: cached %+v, want %+v", d, got, want)
		}
	}
}

// TestManifestCacheFileNamesItsPath: a manifest cache file holds the path
// it was decoded from, so one found under another path's name (a clash of
// names) is not used for it, even for a hard link with the very same stat
// data.
func TestManifestCacheFileNamesItsPath(t *testing.T) {
	sys, state, _ := statFixture(t, 0)
	base := fsys.AbsPath(filepath.Dir(state.String()))
	var paths []fsys.AbsPath
	for _, name := range []string{"a", "b"} {
		root := base.JoinName(name)
		paths = append(paths, root.JoinName(TargetManifestName("codex")))
		os.MkdirAll(root.String(), 0o755)
	}
	os.WriteFile(paths[0].String(), []byte(manifestJSON), 0o644)
	if err := os.Link(paths[0].String(), paths[1].String()); err != nil {
		t.Skip("no hard links:", err)
	}
	time.Sleep(racyWindow + 50*time.Millisecond)
	c := LoadStatCache(sys, state)
	d, _ := fsys.StatDataFollow(sys, paths[0])
	c.manifests.put(paths[0], &d, []byte("decoded a"), false)
	c.Save()
	c = LoadStatCache(sys, state)
	if data, ok := c.manifests.get(sys, paths[0], d); !ok || string(data) != "decoded a" {
		t.Fatalf("a: %q %v", data, ok)
	}
	a, err := os.ReadFile(c.manifests.file(paths[0].String()).String())
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(c.manifests.file(paths[1].String()).String(), a, 0o600)
	if d1, _ := fsys.StatDataFollow(sys, paths[1]); d1 != d {
		t.Fatalf("a hard link's stat data differs: %+v %+v", d1, d)
	}
	if data, ok := c.manifests.get(sys, paths[1], d); ok {
		t.Fatalf("a's cache file was used for b: %q", data)
	}
}

// TestFolderCacheNeedsPathOrder: a folder cache file whose records are not
// in path order (damaged: they are looked up by binary search) is not used.
func TestFolderCacheNeedsPathOrder(t *testing.T) {
	sys, state, files := statFixture(t, 3)
	var dirs []fsys.AbsPath
	for _, f := range files {
		dirs = append(dirs, f.Dir())
	}
	slices.Sort(dirs)
	dirs = slices.Compact(dirs)
	if len(dirs) != 3 {
		t.Fatalf("fixture folders %q", dirs)
	}
	write := func(order []fsys.AbsPath) {
		w := bincodec.NewWriter(dirCacheMagic, statBlobsVersion, 256)
		w.Len(len(order), false)
		for _, d := range order {
			fi, _ := fsys.StatDataFollow(sys, d)
			w.String(d.String())
			w.Int(fi.Size)
			w.Int(fi.MtimeNS)
			w.Int(fi.CtimeNS)
			w.Uint(fi.Ino)
			w.Bytes([]byte("listing"))
		}
		os.MkdirAll(StatCachePath(state).String(), 0o700)
		os.WriteFile(StatCachePath(state).JoinName(dirCacheFile).String(), w.Finish(), 0o600)
	}
	found := func() int {
		c := LoadStatCache(sys, state)
		n := 0
		for _, d := range dirs {
			fi, _ := fsys.StatDataFollow(sys, d)
			if _, ok := c.dirs.get(sys, d, fi); ok {
				n++
			}
		}
		return n
	}
	write(dirs)
	if n := found(); n != 3 {
		t.Fatalf("in order: %d of 3 found", n)
	}
	write([]fsys.AbsPath{dirs[2], dirs[0], dirs[1]})
	if n := found(); n != 0 {
		t.Fatalf("out of order: %d of 3 found", n)
	}
}

// TestParsedManifestSharesDesiredStrings: a manifest parsed from JSON
// takes the desired state's path, hash and module id strings where they
// are equal (the JSON decoder's copies are then garbage), and stays equal
// to what was parsed.
func TestParsedManifestSharesDesiredStrings(t *testing.T) {
	sys, state, _ := statFixture(t, 0)
	root := fsys.AbsPath(filepath.Dir(state.String())).JoinName("root")
	os.MkdirAll(root.String(), 0o755)
	os.WriteFile(root.JoinName(TargetManifestName("codex")).String(), []byte(`{"schema_version": 1, "generated_at": "x", "tool": "codex",
  "managed_files": [
    {"path": "a/SKILL.md", "sha256": "`+strings.Repeat("ab", 32)+`", "module_ids": ["skill:a"]},
    {"path": "b/SKILL.md", "sha256": "`+strings.Repeat("cd", 32)+`", "module_ids": ["skill:b"]}
  ]}`), 0o644)
	files := []*desired.File{
		desired.NewFile("codex", root, target.DesiredFile{Path: root.JoinName("a").JoinName("SKILL.md"), ModuleIDs: []string{"skill:" + "a"}}, strings.Repeat("ab", 32)),
		desired.NewFile("codex", root, target.DesiredFile{Path: root.JoinName("b").JoinName("SKILL.md"), ModuleIDs: []string{"skill:other"}}, strings.Repeat("ff", 32)),
	}
	d := desired.Restore([]string{"codex"}, []desired.Root{{Target: "codex", Path: root}}, nil, files)
	want := ReadTargetManifest(sys, nil, root, "codex", func(string) {})
	m := readTargetManifest(sys, nil, nil, root, "codex", func(string) {}, newSharer(d, root))
	if !reflect.DeepEqual(m, want) {
		t.Fatalf("shared: %+v\nwant %+v", m, want)
	}
	same := func(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }
	a, b := m.ManagedFiles[0], m.ManagedFiles[1]
	if !same(a.Path, string(files[0].Path[len(root)+1:])) || !same(a.SHA256, files[0].SHA256) || !same(a.ModuleIDs[0], files[0].ModuleIDs[0]) {
		t.Fatalf("an entry equal to a desired file's does not share its strings: %+v", a)
	}
	if !same(b.Path, string(files[1].Path[len(root)+1:])) || same(b.SHA256, files[1].SHA256) || same(b.ModuleIDs[0], files[1].ModuleIDs[0]) {
		t.Fatalf("an entry sharing only its path: %+v", b)
	}
}
