package fsys

import (
	"errors"
	"io/fs"
	"os"
	"slices"
	"testing"
)

// createWays are the ways a create can name its file: an unnamed file
// linked by its descriptor (Linux 6.10 on) or through /proc (older
// kernels), and a temp name (no unnamed files here).
var createWays = []struct {
	name          string
	off, byProc   bool
	wantAnonymous bool
}{
	{name: "unnamed file, linked by descriptor", wantAnonymous: true},
	{name: "unnamed file, linked through /proc", byProc: true, wantAnonymous: true},
	{name: "temp name", off: true},
}

// useCreateWay sets the way creates take for the rest of the test.
func useCreateWay(t *testing.T, off, byProc bool) {
	t.Helper()
	wasOff, wasProc := anonOff.Load(), anonByProc.Load()
	t.Cleanup(func() { anonOff.Store(wasOff); anonByProc.Store(wasProc) })
	anonOff.Store(off)
	anonByProc.Store(byProc)
}

// Every way a create can go writes the bytes and exact mode asked for,
// makes missing folders, tells the stat data a look sees, refuses a
// file, folder or link already at the path (leaving it as it is and
// telling nothing), and leaves no other name in the folder.
func TestCreateEveryWay(t *testing.T) {
	for _, way := range createWays {
		t.Run(way.name, func(t *testing.T) {
			useCreateWay(t, way.off, way.byProc)
			root := tempRoot(t)
			sys := NewRealSystem(RealSystemOptions{})
			dir := root.JoinName("deep")
			done, err := createAnon(dir, dir.JoinName("probe"), []byte("p"), 0o644, false, nil)
			if way.wantAnonymous && !done && anonOff.Load() {
				t.Skip("no unnamed files on this kernel or file system")
			}
			if done != way.wantAnonymous || err != nil {
				t.Fatalf("createAnon = %v, %v; want done=%v", done, err, way.wantAnonymous)
			}
			if !done {
				if _, err := os.Lstat(dir.String()); !errors.Is(err, fs.ErrNotExist) {
					t.Fatalf("a create that was not done made its folder: %v", err)
				}
				if err := CreateFile(sys, dir.JoinName("probe"), []byte("p"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			for name, perm := range map[string]fs.FileMode{"run.sh": 0o755, "secret.md": 0o600} {
				path := dir.JoinName(name)
				placed, err := WriteFileStat(sys, path, []byte(name), perm, true)
				if err != nil {
					t.Fatal(err)
				}
				assertPlacedSeen(t, sys, path, placed, name)
				fi, err := os.Lstat(path.String())
				if err != nil || fi.Mode() != perm {
					t.Fatalf("%s: %v, %v; want a regular file of mode %v", name, fi, err, perm)
				}
				if data, _ := os.ReadFile(path.String()); string(data) != name {
					t.Errorf("%s holds %q", name, data)
				}
			}
			if err := os.Mkdir(dir.JoinName("folder").String(), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("run.sh", dir.JoinName("link").String()); err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{"run.sh", "folder", "link"} {
				before, _ := LstatData(sys, dir.JoinName(name))
				placed, err := WriteFileStat(sys, dir.JoinName(name), []byte("new"), 0o644, true)
				if !errors.Is(err, fs.ErrExist) || placed != (Placed{}) {
					t.Errorf("a create over %s = %+v, %v; want nothing told and fs.ErrExist", name, placed, err)
				}
				if after, _ := LstatData(sys, dir.JoinName(name)); after != before {
					t.Errorf("%s changed: %+v -> %+v", name, before, after)
				}
			}
			if data, _ := os.ReadFile(dir.JoinName("run.sh").String()); string(data) != "run.sh" {
				t.Errorf("run.sh = %q after a refused create", data)
			}
			names := entryNames(t, dir)
			if want := []string{"folder", "link", "probe", "run.sh", "secret.md"}; !slices.Equal(names, want) {
				t.Errorf("the folder holds %v, want %v", names, want)
			}
		})
	}
}

// A create whose name is taken by the time the complete file is linked
// (another program made it meanwhile) leaves that file as it is, and the
// unnamed file goes with its descriptor: nothing of it is left.
func TestCreateAnonLosingTheNameLeavesNothing(t *testing.T) {
	for _, way := range createWays[:2] {
		t.Run(way.name, func(t *testing.T) {
			useCreateWay(t, way.off, way.byProc)
			root := tempRoot(t)
			path := root.JoinName("taken")
			if err := os.WriteFile(path.String(), []byte("theirs"), 0o600); err != nil {
				t.Fatal(err)
			}
			done, err := createAnon(root, path, []byte("ours"), 0o644, true, &Placed{})
			if !done && anonOff.Load() {
				t.Skip("no unnamed files on this kernel or file system")
			}
			if !done || !errors.Is(err, fs.ErrExist) {
				t.Fatalf("createAnon = %v, %v; want done and fs.ErrExist", done, err)
			}
			if data, _ := os.ReadFile(path.String()); string(data) != "theirs" {
				t.Errorf("the taken file = %q", data)
			}
			if entries, _ := os.ReadDir(root.String()); len(entries) != 1 {
				t.Errorf("the folder holds %d entries, want the taken file alone", len(entries))
			}
		})
	}
}
