package fsys

import (
	"errors"
	"io/fs"
	"os"
	"testing"
)

// CreateFile writes only where nothing is: a file, a link or a folder at
// the path is left exactly as it is, on the disk, in memory and in a dry
// run, and the error wraps fs.ErrExist.
func TestCreateFileNeverReplaces(t *testing.T) {
	root := tempRoot(t)
	real := NewRealSystem(RealSystemOptions{})
	mem := NewMemSystem()
	for name, sys := range map[string]System{"real": real, "mem": mem, "dry run": NewDryRunSystem(real), "fallback": noCreator{mem}} {
		t.Run(name, func(t *testing.T) {
			dir := root.JoinName(name)
			if name == "mem" || name == "fallback" {
				dir = AbsPath("/x").JoinName(name)
			}
			for _, err := range []error{
				sys.WriteFile(dir.JoinName("file"), []byte("keep"), 0o644),
				sys.MkdirAll(dir.JoinName("folder"), 0o755),
				sys.Symlink("file", dir.JoinName("link")),
			} {
				if err != nil {
					t.Fatal(err)
				}
			}
			for _, what := range []string{"file", "folder", "link"} {
				before, _ := sys.Lstat(dir.JoinName(what))
				err := CreateFile(sys, dir.JoinName(what), []byte("new"), 0o644)
				if !errors.Is(err, fs.ErrExist) {
					t.Errorf("CreateFile over a %s = %v, want fs.ErrExist", what, err)
				}
				after, _ := sys.Lstat(dir.JoinName(what))
				if before.Mode() != after.Mode() {
					t.Errorf("the %s changed: %v -> %v", what, before.Mode(), after.Mode())
				}
			}
			if data, _ := sys.ReadFile(dir.JoinName("file")); string(data) != "keep" {
				t.Errorf("file = %q, want it untouched", data)
			}
			if err := CreateFile(sys, dir.Join("new/deep.md"), []byte("new"), 0o600); err != nil {
				t.Fatal(err)
			}
			if data, _ := sys.ReadFile(dir.Join("new/deep.md")); string(data) != "new" {
				t.Errorf("created file = %q", data)
			}
		})
	}
	assertNoTempFiles(t, root.JoinName("real"))
	if _, err := os.Stat(root.Join("dry run/file").String()); !os.IsNotExist(err) {
		t.Errorf("the dry run wrote to the disk: %v", err)
	}
}

// noCreator hides a System's CreateFile, so the fallback of CreateFile
// (a look, then WriteFile) is what runs.
type noCreator struct{ System }

// The hard-link way (where renameat2 is not there: macOS, the BSDs) moves
// the temp file to a free path and fails, leaving both alone, on a taken
// one.
func TestPlaceByLink(t *testing.T) {
	root := tempRoot(t)
	tmp, free, taken := root.JoinName("tmp").String(), root.JoinName("free").String(), root.JoinName("taken").String()
	for p, data := range map[string]string{tmp: "new", taken: "keep"} {
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := placeByLink(tmp, taken); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("placeByLink over a file = %v, want fs.ErrExist", err)
	}
	if data, _ := os.ReadFile(taken); string(data) != "keep" {
		t.Errorf("taken = %q", data)
	}
	if err := placeByLink(tmp, free); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(free); string(data) != "new" {
		t.Errorf("free = %q", data)
	}
	if _, err := os.Lstat(tmp); !os.IsNotExist(err) {
		t.Errorf("the temp name is still there: %v", err)
	}
}
