package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/targets"
)

// TestDeploySavesEachFileAsWritten: the bytes of files read only when they
// are written (the desired state keeps hashes) reach the snapshot's pack
// and its record with their size, so `rollback --to` has them.
func TestDeploySavesEachFileAsWritten(t *testing.T) {
	env := testEnv(t)
	repo := benchRepo(t, 20, 3)
	e := engine.New(env, targets.NewSet())
	_, d, err := e.Deploy(context.Background(), engine.Request{Repo: repo}, true, engine.ApplyOptions{})
	if err != nil || d.SnapshotID == "" {
		t.Fatalf("deploy: %v (%+v)", err, d)
	}
	store := e.Store()
	rec, err := store.Load(d.SnapshotID)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range rec.Files {
		if f.After == nil || f.Manifest {
			continue
		}
		n++
		disk, err := os.ReadFile(f.Path)
		if err != nil || f.After.Size != int64(len(disk)) {
			t.Fatalf("%s: recorded size %d, %d bytes on disk (%v)", f.Path, f.After.Size, len(disk), err)
		}
		if saved, err := store.ReadBlob(rec.ID, f.After.SHA256); err != nil || string(saved) != string(disk) {
			t.Fatalf("%s: saved %q, %v", f.Path, saved, err)
		}
	}
	if n != 60 {
		t.Fatalf("the record has %d deployed files, want 60", n)
	}
}

// TestRollbackRestoresMoreThanItHolds: a rollback restoring more bytes
// than it keeps between checking and writing them reads the rest again and
// restores every byte.
func TestRollbackRestoresMoreThanItHolds(t *testing.T) {
	env := testEnv(t)
	repo := benchRepo(t, 3, 2)
	big := func(skill int, fill string) {
		path := filepath.Join(repo, "modules", []string{"s0000", "s0001", "s0002"}[skill], "ref", "f01.md")
		mustWrite(t, path, strings.Repeat(fill, 4<<20/len(fill))) // 3 × 4 MiB: over the 8 MiB kept
	}
	e := engine.New(env, targets.NewSet())
	ctx := context.Background()
	deploy := func() string {
		t.Helper()
		_, d, err := e.Deploy(ctx, engine.Request{Repo: repo}, true, engine.ApplyOptions{})
		if err != nil || d.SnapshotID == "" {
			t.Fatalf("deploy: %v (%+v)", err, d)
		}
		return d.SnapshotID
	}
	for i := range 3 {
		big(i, "first version\n")
	}
	first := deploy()
	want := exactTree(t, env.Cwd)
	for i := range 3 {
		big(i, "second version\n")
	}
	deploy()
	if _, _, err := e.Rollback(ctx, engine.RollbackOptions{To: first}); err != nil {
		t.Fatal(err)
	}
	sameFiles(t, "rollback --to the first deploy", exactTree(t, env.Cwd), want)
}
