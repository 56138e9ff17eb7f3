//go:build unix

package fsys

import (
	"errors"
	"io/fs"
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// TestReadRegularDescribesAsLstat checks that ReadRegular reads regular
// files and describes every kind of path exactly as Lstat does: a
// fingerprint taken from its description must match a later Lstat.
func TestReadRegularDescribesAsLstat(t *testing.T) {
	root := tempRoot(t)
	sys := NewRealSystem(RealSystemOptions{})
	file := root.JoinName("file.md")
	mustWriteOS(t, file, "body\n", 0o644)
	special := root.JoinName("special")
	mustWriteOS(t, special, "", 0o755)
	empty := root.JoinName("empty")
	mustWriteOS(t, empty, "", 0o600)
	if err := os.Chmod(special.String(), 0o755|os.ModeSetuid|os.ModeSetgid|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	dir := root.JoinName("dir")
	if err := os.Mkdir(dir.String(), 0o750); err != nil {
		t.Fatal(err)
	}
	link := root.JoinName("link")
	if err := os.Symlink("file.md", link.String()); err != nil {
		t.Skip("no symlinks here:", err)
	}
	paths := []AbsPath{file, special, empty, dir, link}
	if runtime.GOOS != "windows" {
		fifo := root.JoinName("fifo")
		if err := syscall.Mkfifo(fifo.String(), 0o644); err == nil {
			paths = append(paths, fifo) // a FIFO must not block the open
		}
	}
	for _, p := range paths {
		data, fi, err := sys.ReadRegular(p, nil)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		lfi, err := os.Lstat(p.String())
		if err != nil {
			t.Fatal(err)
		}
		got, want := entryOf(p, false, true, StatDataOf(fi)), entryOf(p, false, true, StatDataOf(lfi))
		if got != want || fi.Name() != lfi.Name() || fi.IsDir() != lfi.IsDir() {
			t.Errorf("%s: ReadRegular describes %+v (%s), Lstat %+v (%s)", p, got, fi.Name(), want, lfi.Name())
		}
		switch {
		case p == file && string(data) != "body\n":
			t.Errorf("%s: read %q", p, data)
		case p == empty && (data == nil || len(data) != 0):
			t.Errorf("%s: read %q, want empty", p, data)
		case !lfi.Mode().IsRegular() && data != nil:
			t.Errorf("%s (%v): read %q, want nothing", p, lfi.Mode(), data)
		}
	}
	_, fi, err := sys.ReadRegular(root.JoinName("missing"), nil)
	if !errors.Is(err, fs.ErrNotExist) || fi != nil {
		t.Errorf("missing: %v, %v", fi, err)
	}
	_, _, err = sys.ReadRegular(root.Join("file.md/below"), nil)
	if err == nil {
		t.Errorf("below a file: no error")
	}
}

// TestTrackingReadRegularFingerprints checks that a file a load read with
// ReadRegular is in the fingerprint, unchanged until it changes.
func TestTrackingReadRegularFingerprints(t *testing.T) {
	root := tempRoot(t)
	file := root.JoinName("file.md")
	mustWriteOS(t, file, "one\n", 0o644)
	real := NewRealSystem(RealSystemOptions{})
	tr := NewTrackingSystem(NewReadOnlySystem(real))
	tr.start = time.Now().Add(time.Hour) // the file is not racy
	if data, _, err := ReadRegular(tr, file, nil); err != nil || string(data) != "one\n" {
		t.Fatal(data, err)
	}
	fp, ok := tr.Fingerprint(real, 0)
	if !ok || fp.Len() != 1 || !fp.Unchanged(real) {
		t.Fatalf("fingerprint %v, ok %v", fp, ok)
	}
	mustWriteOS(t, file, "two\n", 0o644)
	if fp.Unchanged(real) {
		t.Error("an edit left the fingerprint unchanged")
	}
}

func mustWriteOS(t *testing.T, p AbsPath, data string, perm fs.FileMode) {
	t.Helper()
	if err := os.WriteFile(p.String(), []byte(data), perm); err != nil {
		t.Fatal(err)
	}
}

// TestReadRegularIntoBuffer checks that the bytes go into the caller's
// buffer when it has room, and into a new slice when it has not.
func TestReadRegularIntoBuffer(t *testing.T) {
	root := tempRoot(t)
	file := root.JoinName("f")
	mustWriteOS(t, file, "0123456789", 0o644)
	sys := NewRealSystem(RealSystemOptions{})
	buf := make([]byte, 64)
	data, _, err := sys.ReadRegular(file, buf)
	if err != nil || string(data) != "0123456789" {
		t.Fatal(data, err)
	}
	if runtime.GOOS == "linux" && &data[0] != &buf[0] {
		t.Error("a buffer with room was not used")
	}
	small := make([]byte, 4)
	if data, _, err := sys.ReadRegular(file, small); err != nil || string(data) != "0123456789" || string(small) != "\x00\x00\x00\x00" {
		t.Errorf("a buffer without room: %q, %v; buffer %q", data, err, small)
	}
}

// lstats is a real System counting Lstats.
type lstats struct {
	*RealSystem
	n int
}

func (l *lstats) Lstat(path AbsPath) (fs.FileInfo, error) {
	l.n++
	return l.RealSystem.Lstat(path)
}

// A dry run reads a file it has not touched from its base with one open
// (no Lstat first), and one it wrote or removed as it recorded it.
func TestDryRunReadRegular(t *testing.T) {
	root := tempRoot(t)
	base := &lstats{RealSystem: NewRealSystem(RealSystemOptions{})}
	for _, name := range []string{"untouched", "written", "removed"} {
		mustWriteOS(t, root.JoinName(name), "on disk\n", 0o644)
	}
	dry := NewDryRunSystem(base)
	if err := dry.WriteFile(root.JoinName("written"), []byte("dry\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := dry.Remove(root.JoinName("removed")); err != nil {
		t.Fatal(err)
	}
	base.n = 0
	data, fi, err := ReadRegular(dry, root.JoinName("untouched"), nil)
	if err != nil || string(data) != "on disk\n" || fi == nil || !fi.Mode().IsRegular() || base.n != 0 {
		t.Errorf("untouched: %q, %v, %d lstats of the base", data, err, base.n)
	}
	data, fi, err = ReadRegular(dry, root.JoinName("written"), nil)
	if err != nil || string(data) != "dry\n" || fi == nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("written in the dry run: %q, %v", data, err)
	}
	if data, _, err := ReadRegular(dry, root.JoinName("removed"), nil); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("removed in the dry run: %q, %v", data, err)
	}
}

// TestReadFitReadsOnlySmallRegularFiles checks that ReadFit reads a
// regular file that fits the buffer into it, and declines everything its
// one read without a look could mistake: a link, a folder, a FIFO, an
// empty file, a file that fills the buffer, a missing path.
func TestReadFitReadsOnlySmallRegularFiles(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("ReadFit reads only where readRegular has its raw path")
	}
	root := tempRoot(t)
	sys := NewRealSystem(RealSystemOptions{})
	file := root.JoinName("file.md")
	mustWriteOS(t, file, "0123456789", 0o644)
	buf := make([]byte, 0, 64)
	data, ok := ReadFit(sys, file, buf)
	if !ok || string(data) != "0123456789" || &data[0] != &buf[:1][0] {
		t.Fatalf("a small file: %q, %v (in the buffer: want it)", data, ok)
	}
	if data, ok := ReadFit(NewReadOnlySystem(sys), file, buf); !ok || string(data) != "0123456789" {
		t.Errorf("through a read-only System: %q, %v", data, ok)
	}
	full := root.JoinName("full")
	mustWriteOS(t, full, "0123", 0o644)
	empty := root.JoinName("empty")
	mustWriteOS(t, empty, "", 0o644)
	link := root.JoinName("link")
	if err := os.Symlink("file.md", link.String()); err != nil {
		t.Fatal(err)
	}
	dir := root.JoinName("dir")
	if err := os.Mkdir(dir.String(), 0o755); err != nil {
		t.Fatal(err)
	}
	fifo := root.JoinName("fifo")
	if err := syscall.Mkfifo(fifo.String(), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		path AbsPath
		buf  []byte
	}{
		{full, make([]byte, 4)}, // fills the buffer: may be longer
		{empty, buf}, {link, buf}, {dir, buf}, {fifo, buf}, {root.JoinName("missing"), buf},
		{file, nil},
	}
	for _, c := range cases {
		done := make(chan struct{})
		go func() {
			defer close(done)
			if data, ok := ReadFit(sys, c.path, c.buf); ok {
				t.Errorf("%s: read %q, want declined", c.path.Base(), data)
			}
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: ReadFit blocked", c.path.Base())
		}
	}
	if _, ok := ReadFit(NewMemSystem(), file, buf); ok {
		t.Error("a System without ReadFit read")
	}
}
