package fsys

import (
	"errors"
	"io/fs"
	"os"
	"slices"
	"testing"
)

// A folder held open creates files by name as a create by path does, in
// every way a create can go: the bytes and mode asked for, the stat data
// a look sees, whatever is at the name left as it is (fs.ErrExist), and
// no other name made. Its files go into the folder that was opened even
// when a link to another folder has taken its place since.
func TestFolderCreatesByNameInTheFolderItOpened(t *testing.T) {
	for _, way := range createWays {
		t.Run(way.name, func(t *testing.T) {
			useCreateWay(t, way.off, way.byProc)
			root := tempRoot(t)
			sys := NewRealSystem(RealSystemOptions{})
			dir := root.JoinName("skills")
			if err := os.Mkdir(dir.String(), 0o755); err != nil {
				t.Fatal(err)
			}
			f := OpenFolder(sys, dir)
			if way.off {
				if f != nil {
					t.Fatal("a folder was held open where files are created through temp names")
				}
				return
			}
			if f == nil {
				t.Fatal("OpenFolder = nil on a RealSystem")
			}
			defer f.Close()
			placed, err := f.CreateFileStat("run.sh", []byte("#!/bin/sh\n"), 0o755)
			if err != nil && anonOff.Load() {
				t.Skip("no unnamed files on this kernel or file system")
			}
			if err != nil {
				t.Fatal(err)
			}
			assertPlacedSeen(t, sys, dir.JoinName("run.sh"), placed, "run.sh")
			if fi, err := os.Lstat(dir.JoinName("run.sh").String()); err != nil || fi.Mode() != 0o755 {
				t.Fatalf("run.sh: %v, %v; want a regular file of mode 0755", fi, err)
			}
			if data, _ := os.ReadFile(dir.JoinName("run.sh").String()); string(data) != "#!/bin/sh\n" {
				t.Errorf("run.sh holds %q", data)
			}
			if err := os.Symlink("run.sh", dir.JoinName("link").String()); err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{"run.sh", "link"} {
				before, _ := LstatData(sys, dir.JoinName(name))
				if placed, err := f.CreateFileStat(name, []byte("new"), 0o644); !errors.Is(err, fs.ErrExist) || placed != (Placed{}) {
					t.Errorf("a create over %s = %+v, %v; want nothing told and fs.ErrExist", name, placed, err)
				}
				if after, _ := LstatData(sys, dir.JoinName(name)); after != before {
					t.Errorf("%s changed: %+v -> %+v", name, before, after)
				}
			}
			if names := entryNames(t, dir); !slices.Equal(names, []string{"link", "run.sh"}) {
				t.Errorf("the folder holds %v", names)
			}
			// The folder moved away and a link to another folder put in
			// its place: the next file still goes into the folder opened.
			moved, elsewhere := root.JoinName("moved"), root.JoinName("elsewhere")
			if err := os.Rename(dir.String(), moved.String()); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(elsewhere.String(), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("elsewhere", dir.String()); err != nil {
				t.Fatal(err)
			}
			if _, err := f.CreateFileStat("late.md", []byte("late"), 0o644); err != nil {
				t.Fatal(err)
			}
			if data, err := os.ReadFile(moved.JoinName("late.md").String()); err != nil || string(data) != "late" {
				t.Errorf("late.md in the folder opened: %q, %v", data, err)
			}
			if names := entryNames(t, elsewhere); len(names) != 0 {
				t.Errorf("a create went through the link: %v", names)
			}
		})
	}
}

// A link where the folder should be is not opened: the caller creates by
// path, through the checks every create by path has.
func TestOpenFolderRefusesALink(t *testing.T) {
	root := tempRoot(t)
	if err := os.Mkdir(root.JoinName("real").String(), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real", root.JoinName("link").String()); err != nil {
		t.Fatal(err)
	}
	sys := NewRealSystem(RealSystemOptions{})
	if _, err := sys.OpenFolder(root.JoinName("link")); err == nil {
		t.Fatal("OpenFolder opened a link")
	}
	if f := OpenFolder(NewMemSystem(), root); f != nil {
		t.Fatal("a System in memory held a folder open")
	}
}
