package fsys

import (
	"errors"
	"fmt"
	"io"
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
			assertPlacedSeen(t, sys, path, placed, fmt.Sprintf("batched=%v create=%v", batched, create))
		}
		placed, err := WriteFileStat(s, path, []byte("other"), 0o600, true)
		if !errors.Is(err, fs.ErrExist) || placed != (Placed{}) {
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
	if err != nil || placed != (Placed{}) {
		t.Errorf("in memory: %+v, %v; want nothing told and no error", placed, err)
	}
	if data, _ := mem.ReadFile(AbsPath("/m/f")); string(data) != "x" {
		t.Errorf("in memory the file = %q", data)
	}
}

// assertPlacedSeen fails t unless placed tells the stat data a look at
// path sees now.
func assertPlacedSeen(t *testing.T, sys System, path AbsPath, placed Placed, what string) {
	t.Helper()
	look, err := LstatData(sys, path)
	if err != nil {
		t.Fatal(err)
	}
	if placed.Stat.Ino == 0 || placed.Stat != look {
		t.Errorf("%s: placed %+v, a look sees %+v", what, placed.Stat, look)
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
	var placed Placed
	err = closePlaceStat(fd, &placed, func() error {
		if err := os.Rename(tmp, path); err != nil {
			return err
		}
		return os.WriteFile(path, []byte("theirs, longer"), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	if placed != (Placed{}) {
		t.Errorf("placed = %+v, want nothing told of a file written since", placed)
	}
}

// What Placed.Distinct promises: when every write of a run says its
// rename moved the change time, a write of the same size right after each
// (the same clock tick, on any clock) leaves stat data other than what
// was placed. On a file system with coarse times the writes say so and
// there is nothing to check.
func TestDistinctPlacedStatSeesTheNextWrite(t *testing.T) {
	for _, way := range createWays {
		t.Run("create through "+way.name, func(t *testing.T) {
			useCreateWay(t, way.off, way.byProc)
			distinctPlacedSeesNextWrite(t, true)
		})
	}
	t.Run("replace", func(t *testing.T) { distinctPlacedSeesNextWrite(t, false) })
}

// distinctPlacedSeesNextWrite: when 50 creates (or replacements) all tell
// distinct stat data, a same-size write by another program right after
// each moves it.
func distinctPlacedSeesNextWrite(t *testing.T, create bool) {
	root := tempRoot(t)
	sys := NewRealSystem(RealSystemOptions{})
	const n = 50
	placed := make([]Placed, n)
	distinct := 0
	for i := range placed {
		path := root.JoinName(fmt.Sprintf("f%d", i))
		if !create {
			if err := os.WriteFile(path.String(), []byte("old!"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		var err error
		if placed[i], err = WriteFileStat(sys, path, []byte("ours"), 0o644, create); err != nil {
			t.Fatal(err)
		}
		if placed[i].Distinct {
			distinct++
		}
		// Another program's write of the same size, at once.
		if err := os.WriteFile(path.String(), []byte("them"), 0o644); err != nil {
			t.Fatal(err)
		}
		if placed[i].Stat.Ino == 0 {
			t.Fatalf("write %d told no stat data", i)
		}
	}
	if distinct < n {
		t.Skipf("%d of %d writes moved the change time: this file system's times are coarse here, and a deploy keeps the racy window", distinct, n)
	}
	for i, p := range placed {
		if now, err := LstatData(sys, root.JoinName(fmt.Sprintf("f%d", i))); err != nil || now == p.Stat {
			t.Errorf("f%d: a write right after the placing left the stat data as placed (%+v, %v)", i, now, err)
		}
	}
}

// WriteStreamStat tells, for a new file and a replacement, the stat data
// a look afterwards sees and whether the rename moved the change time as
// WriteFileStat's writes do; a System that cannot stream tells nothing.
func TestWriteStreamStatIsWhatALookSees(t *testing.T) {
	root := tempRoot(t)
	sys := NewRealSystem(RealSystemOptions{})
	path := root.Join("deep/manifest.json")
	for i := range 2 {
		placed, err := WriteStreamStat(sys, path, 0o644, func(w io.Writer) error {
			_, err := fmt.Fprintf(w, "version %d\n", i)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		assertPlacedSeen(t, sys, path, placed, fmt.Sprintf("write %d", i))
		written, _ := WriteFileStat(sys, root.JoinName(fmt.Sprintf("plain%d", i)), []byte("x"), 0o644, true)
		if placed.Distinct != written.Distinct {
			t.Errorf("write %d: a stream says distinct=%v where a write says %v on the same file system", i, placed.Distinct, written.Distinct)
		}
	}
	assertNoTempFiles(t, root)
	placed, err := WriteStreamStat(NewMemSystem(), AbsPath("/m/f"), 0o644, func(w io.Writer) error { _, err := w.Write([]byte("x")); return err })
	if err != nil || placed != (Placed{}) {
		t.Errorf("in memory: %+v, %v; want nothing told", placed, err)
	}
}
