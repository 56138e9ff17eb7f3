package engine_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentpack/agentpack/engine/overlay"
	"github.com/agentpack/agentpack/engine/sourcecache"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
)

// sameSize rewrites path with its last character but the newline changed,
// keeping its size.
func sameSize(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := len(data) - 2
	data[i] ^= 1
	return data
}

// putBack sets path's modification time back to fi's.
func putBack(t *testing.T, path string, fi fs.FileInfo) {
	t.Helper()
	if err := os.Chtimes(path, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Every way a source can change that a stat-keyed cache could miss: after
// each, plan and status with the source cache read the sources again and
// equal a run without it.
func TestSourceCacheSeesEverySourceEdit(t *testing.T) {
	w := newCacheWorld(t)
	w.deploy(w.engine(false))
	skill := filepath.Join(w.repo, "modules", "s0001", "SKILL.md")
	ref := func(n int) string {
		return filepath.Join(w.repo, "modules", "s0002", "ref", "f0"+string(rune('0'+n))+".md")
	}
	edits := []struct {
		name string
		edit func()
	}{
		{"same size, modification time put back (only the change time moves)", func() {
			fi, _ := os.Stat(skill)
			must(t, os.WriteFile(skill, sameSize(t, skill), 0o644))
			putBack(t, skill, fi)
		}},
		{"a file hashed, not kept: same size, modification time put back", func() {
			fi, _ := os.Stat(ref(2))
			must(t, os.WriteFile(ref(2), sameSize(t, ref(2)), 0o644))
			putBack(t, ref(2), fi)
		}},
		{"a file hashed, not kept: inode swap, modification time put back", func() {
			fi, _ := os.Stat(ref(2))
			tmp := ref(2) + ".tmp"
			must(t, os.WriteFile(tmp, sameSize(t, ref(2)), 0o644))
			putBack(t, tmp, fi)
			must(t, os.Rename(tmp, ref(2)))
		}},
		{"a file hashed, not kept: replaced by a link to a copy", func() {
			data, _ := os.ReadFile(ref(2))
			copyOf := ref(2) + ".copy"
			must(t, os.WriteFile(copyOf, data, 0o644))
			must(t, os.Remove(ref(2)))
			must(t, os.Symlink(filepath.Base(copyOf), ref(2)))
		}},
		{"chmod to the same mode (change time only)", func() { must(t, os.Chmod(skill, 0o644)) }},
		{"mode change", func() { must(t, os.Chmod(ref(1), 0o755)) }},
		{"inode swap: a same-size file renamed over it, modification time put back", func() {
			fi, _ := os.Stat(skill)
			tmp := skill + ".tmp"
			must(t, os.WriteFile(tmp, sameSize(t, skill), 0o644))
			putBack(t, tmp, fi)
			must(t, os.Rename(tmp, skill))
		}},
		{"file renamed", func() { must(t, os.Rename(ref(1), strings.Replace(ref(1), "f01", "g01", 1))) }},
		{"new file in a folder", func() { mustWrite(t, filepath.Join(filepath.Dir(ref(1)), "new.md"), "new\n") }},
		{"file deleted", func() { must(t, os.Remove(ref(2))) }},
		{"agentpack.yaml edited, same size and modification time", func() {
			m := filepath.Join(w.repo, "agentpack.yaml")
			fi, _ := os.Stat(m)
			data, _ := os.ReadFile(m)
			must(t, os.WriteFile(m, []byte(strings.Replace(string(data), `"skill:s0005"`, `"skill:s0009"`, 1)), 0o644))
			putBack(t, m, fi)
		}},
		{"MCP server edited", func() {
			p := filepath.Join(w.repo, "modules", "mcp", "gh.yaml")
			data, _ := os.ReadFile(p)
			must(t, os.WriteFile(p, []byte(strings.Replace(string(data), "gh-mcp", "gh-mcq", 1)), 0o644))
		}},
		{"an overlay created for a module (a folder the load found missing)", func() {
			mustWrite(t, filepath.Join(w.repo, "overlays", overlay.FSKey("skill:s0003"), "SKILL.md"), "---\nname: s0003\ndescription: overlaid\n---\n")
		}},
		{"the overlay edited", func() {
			mustWrite(t, filepath.Join(w.repo, "overlays", overlay.FSKey("skill:s0003"), "SKILL.md"), "---\nname: s0003\ndescription: overlaid again\n---\n")
		}},
		{"a path the load found missing created (sub/.git: the project root moves)", func() {
			must(t, os.Mkdir(filepath.Join(w.env.Cwd, ".git"), 0o755))
		}},
	}
	for _, ed := range edits {
		w.warm()
		ed.edit()
		w.same(ed.name)
	}
}

// coarseSystem shows stat data as a file system that keeps whole seconds
// and no change time or inode does (FAT, some network mounts).
type coarseSystem struct{ fsys.System }

type coarseInfo struct{ fs.FileInfo }

func (c coarseInfo) ModTime() time.Time { return c.FileInfo.ModTime().Truncate(time.Second) }
func (c coarseInfo) Sys() any           { return nil }

func (c coarseSystem) Lstat(p fsys.AbsPath) (fs.FileInfo, error) {
	fi, err := c.System.Lstat(p)
	if err != nil {
		return nil, err
	}
	return coarseInfo{fi}, nil
}

func (c coarseSystem) Stat(p fsys.AbsPath) (fs.FileInfo, error) {
	fi, err := c.System.Stat(p)
	if err != nil {
		return nil, err
	}
	return coarseInfo{fi}, nil
}

// Racy clean: on a file system with whole-second timestamps, a file
// edited in the same second as the load that cached it keeps its stat
// data; the cache must not have trusted it.
func TestSourceCacheRacyCleanSameSecond(t *testing.T) {
	w := newCacheWorld(t)
	skill := filepath.Join(w.repo, "modules", "s0001", "SKILL.md")
	second := time.Now().Truncate(time.Second)
	must(t, os.Chtimes(skill, second, second))
	coarse := w.engine(true)
	coarse.Sys = coarseSystem{coarse.Sys}
	cp, _ := w.outputs(coarse) // may cache: it must not trust SKILL.md
	must(t, os.WriteFile(skill, sameSize(t, skill), 0o644))
	must(t, os.Chtimes(skill, second, second)) // same second: the same stat data
	coarse = w.engine(true)
	coarse.Sys = coarseSystem{coarse.Sys}
	cp2, cs2 := w.outputs(coarse)
	up, us := w.outputs(w.engine(false))
	if cp2 == cp || cp2 != up || cs2 != us {
		t.Fatalf("an edit in the same second as the cached load was missed:\nbefore %s\nafter  %s\nwant   %s", cp, cp2, up)
	}
}

// A damaged, truncated or other-version cache file is ignored and
// rebuilt, never an error.
func TestSourceCacheRebuildsDamagedFile(t *testing.T) {
	w := newCacheWorld(t)
	w.warm()
	files, _ := filepath.Glob(filepath.Join(w.env.CacheDir(), "load", "*.bin"))
	if len(files) != 1 {
		t.Fatalf("cache files: %v", files)
	}
	good, _ := os.ReadFile(files[0])
	damage := map[string][]byte{
		"empty":         {},
		"truncated":     good[:len(good)/2],
		"a flipped bit": append(append([]byte{}, good[:100]...), append([]byte{good[100] ^ 4}, good[101:]...)...),
		"other version": append(append([]byte{}, good[:23]...), append([]byte{99}, good[24:]...)...),
		"garbage":       []byte(strings.Repeat("agentpack", 100)),
	}
	up, us := w.outputs(w.engine(false))
	for name, data := range damage {
		must(t, os.WriteFile(files[0], data, 0o600))
		time.Sleep(150 * time.Millisecond)
		cp, cs := w.outputs(w.engine(true))
		if cp != up || cs != us {
			t.Errorf("%s: plan or status differ from a run without the cache", name)
		}
		data, _ := os.ReadFile(files[0])
		if _, err := sourcecache.Decode(data); err != nil {
			t.Errorf("%s: the cache file was not rebuilt: %v", name, err)
		}
	}
}

// A dry run records no cache write, and a System that cannot write the
// cache folder still plans; neither leaves a cache file.
func TestSourceCacheWritesOnlyWhereItCan(t *testing.T) {
	w := newCacheWorld(t)
	time.Sleep(150 * time.Millisecond)
	dry := w.engine(true)
	rec := fsys.NewDryRunSystem(dry.Sys)
	dry.Sys = rec
	w.outputs(dry)
	if ops := rec.Ops(); len(ops) != 0 {
		t.Fatalf("a dry-run plan recorded %v", ops)
	}
	ro := w.engine(true)
	ro.Sys = fsys.NewReadOnlySystem(ro.Sys) // not even the cache folder
	w.outputs(ro)
	if files, _ := filepath.Glob(filepath.Join(w.env.CacheDir(), "load", "*")); len(files) != 0 {
		t.Fatalf("cache files written: %v", files)
	}
}

// namedReads lists the files read below one folder.
type namedReads struct {
	fsys.System
	below fsys.AbsPath
	mu    *sync.Mutex
	read  *[]string
}

func (c namedReads) ReadFile(p fsys.AbsPath) ([]byte, error) {
	c.note(p)
	return c.System.ReadFile(p)
}

func (c namedReads) ReadRegular(p fsys.AbsPath, buf []byte) ([]byte, fs.FileInfo, error) {
	c.note(p)
	return fsys.ReadRegular(c.System, p, buf)
}

func (c namedReads) note(p fsys.AbsPath) {
	if c.below.Contains(p) {
		c.mu.Lock()
		*c.read = append(*c.read, p.String())
		c.mu.Unlock()
	}
}

// After a file of a module is saved by rename (its folder's listing moves,
// so the cached state is loaded again, not patched), the load reads that
// file again and the modules' main files (parsed), not every file it only
// hashes: the others' hashes come from the last load, by their stat data.
func TestSourceCacheRereadsOnlyEditedFiles(t *testing.T) {
	w := newCacheWorld(t)
	w.warm()
	edited := filepath.Join(w.repo, "modules", "s0002", "ref", "f01.md")
	saveByRename(t, edited, "edited\n")
	time.Sleep(150 * time.Millisecond)
	var mu sync.Mutex
	var read []string
	e := w.engine(true)
	e.Sys = namedReads{System: e.Sys, below: fsys.AbsPath(w.repo), mu: &mu, read: &read}
	cp, cs := w.outputs(e)
	loadedAgain(t, read, w.repo)
	onlyEditedRead(t, read, edited)
	if up, us := w.outputs(w.engine(false)); cp != up || cs != us {
		t.Errorf("plan or status with the known hashes differ from a run without the cache:\n%s\n%s", cp, up)
	}
}

// saveByRename writes content to path as editors that save through a
// temporary file do: a new file renamed over the old one.
func saveByRename(t *testing.T, path, content string) {
	t.Helper()
	must(t, os.WriteFile(path+".saving", []byte(content), 0o644))
	must(t, os.Rename(path+".saving", path))
}

// loadedAgain fails unless read, the files a command read, shows the
// repo loaded again (its agentpack.yaml read), not a cached state used or
// patched.
func loadedAgain(t *testing.T, read []string, repo string) {
	t.Helper()
	if !slices.Contains(read, filepath.Join(repo, "agentpack.yaml")) {
		t.Errorf("the repo was not loaded again: read %v", read)
	}
}

// onlyEditedRead fails unless, of the ref files (those a load only
// hashes), read lists just edited.
func onlyEditedRead(t *testing.T, read []string, edited string) {
	t.Helper()
	var refs []string
	for _, p := range read {
		if strings.Contains(p, string(filepath.Separator)+"ref"+string(filepath.Separator)) {
			refs = append(refs, p)
		}
	}
	if len(refs) != 1 || refs[0] != edited {
		t.Errorf("the load after one edit read %v of the files it only hashes, want just %s", refs, edited)
	}
}

// readsDuring is what a plan and a status with the source cache read of
// the repo (ReadFile, ReadRegular), sorted, and how many files they read
// and folders they listed below it in all.
func (w *cacheWorld) readsDuring() (plan, status string, read []string, looks int64) {
	var mu sync.Mutex
	e := w.engine(true)
	e.Sys = namedReads{System: e.Sys, below: fsys.AbsPath(w.repo), mu: &mu, read: &read}
	w.reads.Store(0)
	plan, status = w.outputs(e)
	slices.Sort(read)
	return plan, status, read, w.reads.Load()
}

// An in-place edit of files a load only copies (a skill's reference
// files, whose bytes it only hashes, and its SKILL.md, whose front matter
// it only checks) patches the cached state: the plan after it reads just
// those files, lists no folder and answers as a run without the cache
// does, and the entry it saves leaves nothing to read for the next.
func TestSourceCachePatchesEditsOfCopiedFiles(t *testing.T) {
	w := newCacheWorld(t)
	w.deploy(w.engine(false))
	w.warm()
	edited := []string{
		filepath.Join(w.repo, "modules", "s0001", "SKILL.md"),
		filepath.Join(w.repo, "modules", "s0002", "ref", "f01.md"),
		filepath.Join(w.repo, "modules", "s0004", "ref", "f02.md"),
	}
	for _, p := range edited[1:] {
		appendLine(t, p, "one more line")
	}
	data, err := os.ReadFile(edited[0])
	must(t, err)
	must(t, os.WriteFile(edited[0], []byte(strings.Replace(string(data), "description: skill 1", "description: another", 1)), 0o644))
	time.Sleep(150 * time.Millisecond)
	cp, cs, read, looks := w.readsDuring()
	if !slices.Equal(read, edited) || looks != int64(len(edited)) {
		t.Errorf("after editing %v the plan and status read %v, %d reads and listings in all", edited, read, looks)
	}
	if up, us := w.outputs(w.engine(false)); cp != up || cs != us {
		t.Errorf("plan or status from a patched state differ from a run without the cache:\n%s\n%s", cp, up)
	}
	if !strings.Contains(cp, `"summary":{"create":0,"update":6,"delete":0}`) {
		t.Errorf("the plan does not update the copies of the edited files, two targets' each: %s", cp)
	}
	if _, _, read, looks := w.readsDuring(); looks != 0 {
		t.Errorf("the plan after the patch read %v again (%d looks): the patched entry was not saved", read, looks)
	}
}

// A patch made right after the edit is used but not saved (the racy rule:
// the edit's times are too recent to stand for the bytes hashed), so the
// status after the plan reads the file again; once its times are old
// enough, the plan saves the entry, its status reads nothing, and nor
// does the next plan.
func TestSourceCachePatchIsSavedOnlyWhenSettled(t *testing.T) {
	w := newCacheWorld(t)
	w.warm()
	edited := filepath.Join(w.repo, "modules", "s0001", "ref", "f02.md")
	data, err := os.ReadFile(edited)
	must(t, err)
	must(t, os.WriteFile(edited, append(data, "racy\n"...), 0o644))
	for i, want := range []int64{2, 1, 0} {
		if i == 1 {
			time.Sleep(150 * time.Millisecond)
		}
		_, _, read, looks := w.readsDuring()
		if looks != want {
			t.Errorf("plan %d after the edit read %v (%d looks), want %d", i+1, read, looks, want)
		}
	}
	cp, cs := w.outputs(w.engine(true))
	if up, us := w.outputs(w.engine(false)); cp != up || cs != us {
		t.Errorf("plan or status differ from a run without the cache:\n%s\n%s", cp, up)
	}
}

// Edits a patch cannot stand for load the repo again (folders listed, the
// manifest read) and answer as a run without the cache: a new mode; a
// config file; an MCP module's definition, whose bytes the compile parses;
// a new file in a folder.
func TestSourceCacheLoadsAgainForEditsItCannotPatch(t *testing.T) {
	edits := []struct {
		name string
		edit func(w *cacheWorld)
	}{
		{"a copied file made executable", func(w *cacheWorld) {
			must(t, os.Chmod(filepath.Join(w.repo, "modules", "s0003", "ref", "f01.md"), 0o755))
		}},
		{"agentpack.yaml", func(w *cacheWorld) {
			appendLine(t, filepath.Join(w.repo, "agentpack.yaml"), "# a comment")
		}},
		{"an MCP server's definition", func(w *cacheWorld) {
			appendLine(t, filepath.Join(w.repo, "modules", "mcp", "gh.yaml"), "# a comment")
		}},
		{"a copied file edited beside a new one", func(w *cacheWorld) {
			appendLine(t, filepath.Join(w.repo, "modules", "s0003", "ref", "f01.md"), "edited")
			mustWrite(t, filepath.Join(w.repo, "modules", "s0003", "ref", "new.md"), "new\n")
		}},
	}
	for _, c := range edits {
		t.Run(c.name, func(t *testing.T) {
			w := newCacheWorld(t)
			w.warm()
			c.edit(w)
			time.Sleep(150 * time.Millisecond)
			cp, cs, read, looks := w.readsDuring()
			if looks <= int64(len(read)) || !slices.Contains(read, filepath.Join(w.repo, "agentpack.yaml")) {
				t.Errorf("the plan did not load the repo again: read %v, %d reads and listings", read, looks)
			}
			if up, us := w.outputs(w.engine(false)); cp != up || cs != us {
				t.Errorf("plan or status differ from a run without the cache:\n%s\n%s", cp, up)
			}
		})
	}
}

// appendLine adds line to the file at path, in place.
func appendLine(t *testing.T, path, line string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	_, err = f.WriteString(line + "\n")
	must(t, err)
	must(t, f.Close())
}

// A SKILL.md edited so that it fails the skill's checks is not patched:
// the plan loads the repo again and fails as a run without the cache does.
func TestSourceCacheLoadsAgainForAnInvalidSkill(t *testing.T) {
	w := newCacheWorld(t)
	w.warm()
	skill := filepath.Join(w.repo, "modules", "s0003", "SKILL.md")
	data, err := os.ReadFile(skill)
	must(t, err)
	must(t, os.WriteFile(skill, []byte(strings.Replace(string(data), "description: skill 3", "description: \"\"", 1)), 0o644))
	time.Sleep(150 * time.Millisecond)
	codes := [2]apperr.Code{}
	for i, cached := range []bool{true, false} {
		_, _, err := w.engine(cached).Plan(context.Background(), w.req)
		if ae := apperr.As(err); ae != nil {
			codes[i] = ae.Code
		}
	}
	if codes[0] == "" || codes[0] != codes[1] {
		t.Errorf("plan of an invalid SKILL.md: %q with the cache, %q without", codes[0], codes[1])
	}
}
