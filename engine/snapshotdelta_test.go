package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/agentpack/agentpack/snapshots"
	"github.com/agentpack/agentpack/targets"
)

// exactTree returns every file under dir (but .git) as path → bytes + mode.
func exactTree(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if d.IsDir() {
			out[p] = "dir"
			return nil
		}
		data, err := os.ReadFile(p)
		fi, _ := d.Info()
		out[p] = fi.Mode().String() + " " + string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameFiles(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	if maps.Equal(got, want) {
		return
	}
	for p := range want {
		if got[p] != want[p] {
			t.Errorf("%s: %s differs (len %d, want %d)", what, p, len(got[p]), len(want[p]))
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("%s: %s should not exist", what, p)
		}
	}
}

// manifestChange returns the target manifest's change in snapshot id.
func manifestChange(t *testing.T, env engine.Env, id string) snapshots.FileChange {
	t.Helper()
	r, err := snapshots.NewStore(env.StateDir()).Load(id)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range r.Files {
		if f.Manifest && f.Target == "codex" {
			return f
		}
	}
	t.Fatalf("snapshot %s changed no codex manifest", id)
	return snapshots.FileChange{}
}

// packSize is the size of snapshot id's saved bytes.
func packSize(t testing.TB, env engine.Env, id string) int64 {
	t.Helper()
	var n int64
	_ = filepath.WalkDir(filepath.Join(env.StateDir(), "snapshots", id), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() != "journal.json" {
			fi, _ := d.Info()
			n += fi.Size()
		}
		return nil
	})
	return n
}

// deltaWorld is a project, an engine and a repo (req.Repo) of 60 skills
// of files files each, and deploy, which deploys the repo and returns its
// snapshot's id.
func deltaWorld(t *testing.T, files int) (env engine.Env, e *engine.Engine, req engine.Request, deploy func() string) {
	t.Helper()
	env = testEnv(t)
	req = engine.Request{Repo: benchRepo(t, 60, files)}
	e = engine.New(env, targets.NewSet())
	deploy = func() string {
		t.Helper()
		_, d, err := e.Deploy(context.Background(), req, true, engine.ApplyOptions{})
		if err != nil || d.SnapshotID == "" {
			t.Fatalf("deploy: %v (%+v)", err, d)
		}
		return d.SnapshotID
	}
	return env, e, req, deploy
}

// TestRollbackAcrossDeltaSnapshots: deploys that change a few files of many
// save the target manifest as deltas, and rolling back across several of
// them (and undoing those rollbacks) puts back every byte of every file,
// manifests included, as it was right after each snapshot.
func TestRollbackAcrossDeltaSnapshots(t *testing.T) {
	env, e, req, deploy := deltaWorld(t, 3)
	repo, ctx := req.Repo, context.Background()
	var ids []string
	var states []map[string]string
	step := func(edit func()) {
		edit()
		ids = append(ids, deploy())
		states = append(states, exactTree(t, env.Cwd))
	}
	src := func(skill int, f string) string {
		return filepath.Join(repo, "modules", fmt.Sprintf("s%04d", skill), "ref", f)
	}
	step(func() {})
	step(func() { mustWrite(t, src(3, "f01.md"), "changed three\n") }) // one update
	step(func() {                                                      // an update, a new file and a whole skill gone
		mustWrite(t, src(7, "f02.md"), "changed seven\n")
		mustWrite(t, src(9, "f03.md"), "new file\n")
		yaml := mustRead(t, filepath.Join(repo, "agentpack.yaml"))
		i := strings.Index(yaml, "  - {id: \"skill:s0011\"")
		j := i + strings.Index(yaml[i:], "\n") + 1
		mustWrite(t, filepath.Join(repo, "agentpack.yaml"), yaml[:i]+yaml[j:])
	})
	step(func() { mustWrite(t, src(3, "f01.md"), "changed three again\n") })

	for _, id := range ids[1:] {
		m := manifestChange(t, env, id)
		if m.Before == nil || m.Before.Delta == nil || m.After.Delta == nil {
			t.Fatalf("snapshot %s saved the manifest whole: %+v", id, m)
		}
		if whole := m.Before.Size + m.After.Size; packSize(t, env, id) >= whole/2 {
			t.Errorf("snapshot %s saved %d bytes for a few files; the manifest alone is %d bytes twice", id, packSize(t, env, id), m.After.Size)
		}
	}

	rollback := func(opt engine.RollbackOptions, want map[string]string, what string) {
		t.Helper()
		// Its dry run first: the same files, from reads alone, with
		// nothing written even to the recording System (no pack, journal
		// or record made and thrown away).
		dry := engine.New(env, targets.NewSet())
		rec := fsys.NewDryRunSystem(dry.Sys)
		dry.Sys = rec
		before := exactTree(t, env.Cwd)
		preview, _, err := dry.Rollback(ctx, opt)
		if err != nil {
			t.Fatalf("%s --dry-run: %v", what, err)
		}
		if ops := rec.Ops(); len(ops) > 0 {
			t.Errorf("%s --dry-run recorded %d writes (first %s %s); a preview makes none", what, len(ops), ops[0].Kind, ops[0].Path)
		}
		sameFiles(t, what+" --dry-run", exactTree(t, env.Cwd), before)
		done, _, err := e.Rollback(ctx, opt)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		sameFiles(t, what, exactTree(t, env.Cwd), want)
		if !preview.DryRun || !reflect.DeepEqual(preview.Files, done.Files) || preview.Restored != done.Restored || preview.Removed != done.Removed {
			t.Errorf("%s --dry-run showed %d restored, %d removed: %v\nthe rollback did %d, %d: %v", what,
				preview.Restored, preview.Removed, preview.Files, done.Restored, done.Removed, done.Files)
		}
	}
	rollback(engine.RollbackOptions{To: ids[1]}, states[1], "rollback --to the second deploy")
	rollback(engine.RollbackOptions{To: ids[0]}, states[0], "then --to the first")
	rollback(engine.RollbackOptions{Last: true}, states[1], "then --last")
	rollback(engine.RollbackOptions{To: ids[3]}, states[3], "then --to the newest deploy")
	rollback(engine.RollbackOptions{To: ids[2]}, states[2], "then --to the third")
	if _, st, err := e.Status(ctx, req, nil); err != nil || len(st.Drift) == 0 {
		t.Fatalf("status after rolling back to an older source: %v, drift %d (want the files of the newer source pending)", err, len(st.Drift))
	}
}

// A deploy that changes most files of a root saves its manifest whole,
// both texts, without computing deltas about as large (nor holding both
// texts, two deltas and a line index to compute them); rolling back across
// it and across a later delta snapshot built on it puts back every byte.
func TestMostlyChangedManifestIsSavedWhole(t *testing.T) {
	env, e, req, deploy := deltaWorld(t, 4)
	repo, ctx := req.Repo, context.Background()
	start := deploy()
	first := exactTree(t, env.Cwd)
	for i := range 60 {
		for _, f := range []string{"f01.md", "f02.md"} { // half the files
			mustWrite(t, filepath.Join(repo, "modules", fmt.Sprintf("s%04d", i), "ref", f), fmt.Sprintf("changed %d\n", i))
		}
	}
	most := deploy()
	m := manifestChange(t, env, most)
	if m.Before == nil || m.Before.Delta != nil || m.After.Delta != nil {
		t.Fatalf("a deploy of half the files saved the manifest as deltas: %+v", m)
	}
	second := exactTree(t, env.Cwd)
	mustWrite(t, filepath.Join(repo, "modules", "s0003", "ref", "f03.md"), "one more\n")
	few := deploy()
	if m := manifestChange(t, env, few); m.Before == nil || m.Before.Delta == nil {
		t.Fatalf("a deploy of one file saved the manifest whole: %+v", m)
	}
	third := exactTree(t, env.Cwd)
	for _, to := range []struct {
		id, what string
		want     map[string]string
	}{{most, "the deploy of half the files", second}, {start, "the first deploy", first}, {few, "the deploy of one file", third}} {
		if _, _, err := e.Rollback(ctx, engine.RollbackOptions{To: to.id}); err != nil {
			t.Fatal(err)
		}
		sameFiles(t, "rollback --to "+to.what, exactTree(t, env.Cwd), to.want)
	}
}

// TestRollbackOfVersion1Snapshot: a snapshot written before deltas (record
// without schema_version, every Before and After saved whole) still rolls
// back exactly.
func TestRollbackOfVersion1Snapshot(t *testing.T) {
	env := testEnv(t)
	repo := benchRepo(t, 60, 3)
	e := engine.New(env, targets.NewSet())
	req := engine.Request{Repo: repo}
	ctx := context.Background()
	if _, _, err := e.Deploy(ctx, req, true, engine.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	before := exactTree(t, env.Cwd)
	mustWrite(t, filepath.Join(repo, "modules", "s0004", "ref", "f01.md"), "changed\n")
	_, d, err := e.Deploy(ctx, req, true, engine.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	downgradeRecord(t, env, d.SnapshotID)
	if _, _, err := e.Rollback(ctx, engine.RollbackOptions{Last: true}); err != nil {
		t.Fatal(err)
	}
	sameFiles(t, "rollback --last of a version 1 snapshot", exactTree(t, env.Cwd), before)
}

// downgradeRecord rewrites snapshot id as agentpack wrote it before
// deltas: every content saved whole (as single blobs, which version 1
// read as well as packs), no schema_version, no delta.
func downgradeRecord(t *testing.T, env engine.Env, id string) {
	t.Helper()
	store := snapshots.NewStore(env.StateDir())
	rec, err := store.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	ids, _ := store.IDs()
	records := []*snapshots.Record{rec}
	for _, other := range ids {
		if other != id {
			r, _ := store.Load(other)
			records = append(records, r)
		}
	}
	contents := store.Contents(records)
	for _, f := range rec.Files {
		disk, _ := os.ReadFile(f.Path)
		for _, c := range []*snapshots.Content{f.Before, f.After} {
			if c == nil {
				continue
			}
			data, err := contents.Read(f.Target, f.Path, id, c, disk)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := store.SaveBlob(id, data); err != nil {
				t.Fatal(err)
			}
		}
	}
	path := filepath.Join(env.StateDir(), "snapshots", id+".json")
	var raw map[string]any
	if err := json.Unmarshal([]byte(mustRead(t, path)), &raw); err != nil {
		t.Fatal(err)
	}
	delete(raw, "schema_version")
	for _, f := range raw["files"].([]any) {
		for _, side := range []string{"before", "after"} {
			if c, ok := f.(map[string]any)[side].(map[string]any); ok {
				delete(c, "delta")
			}
		}
	}
	data, _ := json.MarshalIndent(raw, "", "  ")
	if strings.Contains(string(data), "delta") || !slices.Contains(ids, id) {
		t.Fatal("setup: the record still names a delta")
	}
	mustWrite(t, path, string(data))
	// The pack goes: its blobs are saved whole above, and version 1 never
	// wrote deltas.
	for _, name := range []string{"blobs.pack", "blobs.pack.idx"} {
		if err := os.Remove(filepath.Join(env.StateDir(), "snapshots", id, name)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDurableDeployAndRollback: with AGENTPACK_FSYNC=1 (Env.Fsync) a deploy
// writes its files through one barrier and a rollback still puts every
// byte back.
func TestDurableDeployAndRollback(t *testing.T) {
	env := testEnv(t)
	env.Fsync = true
	repo := benchRepo(t, 20, 3)
	e := engine.New(env, targets.NewSet())
	ctx := context.Background()
	before := exactTree(t, env.Cwd)
	_, d, err := e.Deploy(ctx, engine.Request{Repo: repo}, true, engine.ApplyOptions{})
	if err != nil || d.Summary.Create != 60 {
		t.Fatalf("durable deploy: %v (%+v)", err, d)
	}
	if _, _, err := e.Rollback(ctx, engine.RollbackOptions{Last: true}); err != nil {
		t.Fatal(err)
	}
	sameFiles(t, "durable rollback", exactTree(t, env.Cwd), before)
}

// TestRecoveryRebuildsADeltaManifest: an apply that dies after writing its
// files (the manifest included, saved as deltas) is rolled back by the next
// command to the exact bytes it found, manifest included.
func TestRecoveryRebuildsADeltaManifest(t *testing.T) {
	env := testEnv(t)
	repo := benchRepo(t, 60, 3)
	ctx := context.Background()
	req := engine.Request{Repo: repo}
	if _, _, err := engine.New(env, targets.NewSet()).Deploy(ctx, req, true, engine.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	before := exactTree(t, env.Cwd)
	mustWrite(t, filepath.Join(repo, "modules", "s0005", "ref", "f01.md"), "changed\n")
	deployDyingAt(t, engine.New(env, targets.NewSet()), req, "files written")
	if got := exactTree(t, env.Cwd); maps.Equal(got, before) {
		t.Fatal("setup: the interrupted deploy wrote nothing")
	}
	if _, warnings, err := engine.New(env, targets.NewSet()).Snapshots(ctx); err != nil || len(warnings) == 0 {
		t.Fatalf("the next command did not recover: %v %q", err, warnings)
	}
	sameFiles(t, "after recovery", exactTree(t, env.Cwd), before)
}

// A rollback that puts back most files of a root saves that root's
// manifest whole, as the deploy it undoes did, without computing deltas
// about as large; one that puts back a file keeps its deltas. Undoing
// either puts back every byte.
func TestRollbackOfMostFilesSavesTheManifestWhole(t *testing.T) {
	env, e, req, deploy := deltaWorld(t, 4)
	repo, ctx := req.Repo, context.Background()
	deploy()
	first := exactTree(t, env.Cwd)
	for i := range 60 {
		for _, f := range []string{"f01.md", "f02.md"} {
			mustWrite(t, filepath.Join(repo, "modules", fmt.Sprintf("s%04d", i), "ref", f), fmt.Sprintf("changed %d\n", i))
		}
	}
	deploy()
	second := exactTree(t, env.Cwd)
	rb, _, err := e.Rollback(ctx, engine.RollbackOptions{Last: true})
	if err != nil {
		t.Fatal(err)
	}
	if m := manifestChange(t, env, rb.EventSnapshotID); m.Before == nil || m.Before.Delta != nil || m.After.Delta != nil {
		t.Fatalf("a rollback of half the files saved the manifest as deltas: %+v", m)
	}
	sameFiles(t, "rollback of half the files", exactTree(t, env.Cwd), first)
	if _, _, err := e.Rollback(ctx, engine.RollbackOptions{Last: true}); err != nil {
		t.Fatal(err)
	}
	sameFiles(t, "its undo", exactTree(t, env.Cwd), second)

	mustWrite(t, filepath.Join(repo, "modules", "s0003", "ref", "f03.md"), "one more\n")
	deploy()
	rb, _, err = e.Rollback(ctx, engine.RollbackOptions{Last: true})
	if err != nil {
		t.Fatal(err)
	}
	if m := manifestChange(t, env, rb.EventSnapshotID); m.Before == nil || m.Before.Delta == nil {
		t.Fatalf("a rollback of one file saved the manifest whole: %+v", m)
	}
	sameFiles(t, "rollback of one file", exactTree(t, env.Cwd), second)
}
