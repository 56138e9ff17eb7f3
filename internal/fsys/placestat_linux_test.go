package fsys

import (
	"errors"
	"io/fs"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// WriteFileStat on the disk gives, for a create and for a replacement,
// the stat data a look at the file afterwards sees (the rename's change
// time included), and a create over a taken path fails as CreateFile
// does, with nothing told.
func TestWriteFileStatIsWhatALookSees(t *testing.T) {
	root := tempRoot(t)
	sys := NewRealSystem(RealSystemOptions{})
	for _, batched := range []bool{false, true} {
		var s System = sys
		if batched {
			s, _ = NewRealSystem(RealSystemOptions{Fsync: true}).Batched()
		}
		path := root.Join("deep/new.md")
		if batched {
			path = root.Join("batched/new.md")
		}
		for i, create := range []bool{true, false} {
			placed, err := WriteFileStat(s, path, []byte("v"+string(rune('1'+i))), 0o600, create)
			if err != nil {
				t.Fatal(err)
			}
			look, err := LstatData(sys, path)
			if err != nil {
				t.Fatal(err)
			}
			if placed.Ino == 0 || placed != look {
				t.Errorf("batched=%v create=%v: placed %+v, a look sees %+v", batched, create, placed, look)
			}
		}
		placed, err := WriteFileStat(s, path, []byte("other"), 0o600, true)
		if !errors.Is(err, fs.ErrExist) || placed != (StatData{}) {
			t.Errorf("a create over a file = %+v, %v; want nothing told and fs.ErrExist", placed, err)
		}
		if data, _ := os.ReadFile(path.String()); string(data) != "v2" {
			t.Errorf("the file = %q, want v2 kept", data)
		}
	}
	assertNoTempFiles(t, root)
	// A System that cannot tell writes all the same.
	mem := NewMemSystem()
	placed, err := WriteFileStat(mem, AbsPath("/m/f"), []byte("x"), 0o644, true)
	if err != nil || placed != (StatData{}) {
		t.Errorf("in memory: %+v, %v; want zero stat data and no error", placed, err)
	}
	if data, _ := mem.ReadFile(AbsPath("/m/f")); string(data) != "x" {
		t.Errorf("in memory the file = %q", data)
	}
}

// Another program writing to the file between its placing and the look at
// it: the stat data would not describe the bytes written, so none are told.
func TestClosePlaceStatTellsNothingOfAFileChangedSincePlaced(t *testing.T) {
	root := tempRoot(t)
	tmp, path := root.JoinName("tmp").String(), root.JoinName("file").String()
	fd, err := unix.Open(tmp, unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeAll(fd, []byte("ours")); err != nil {
		t.Fatal(err)
	}
	var placed StatData
	err = closePlaceStat(fd, &placed, func() error {
		if err := os.Rename(tmp, path); err != nil {
			return err
		}
		return os.WriteFile(path, []byte("theirs, longer"), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	if placed != (StatData{}) {
		t.Errorf("placed = %+v, want nothing told of a file written since", placed)
	}
}
