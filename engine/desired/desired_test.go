package desired_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentpack/agentpack/engine/desired"
	"github.com/agentpack/agentpack/engine/target"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/checksum"
	"github.com/agentpack/agentpack/internal/fsys"
)

// A file restored without its bytes reads them from its source, and a
// source whose bytes no longer hash as compiled is an error, never other
// bytes handed to a writer.
func TestFileBytesReadsAndChecksTheSource(t *testing.T) {
	sys := fsys.NewMemSystem()
	src := fsys.AbsPath("/repo/modules/s/ref/a.md")
	if err := sys.MkdirAll(src.Dir(), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := sys.WriteFile(src, []byte("compiled\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f := desired.NewFile("", "", target.DesiredFile{Path: "/proj/.codex/a.md", Src: src}, checksum.SHA256Hex([]byte("compiled\n")))
	data, err := f.Bytes(sys)
	if err != nil || string(data) != "compiled\n" {
		t.Fatalf("Bytes = %q, %v", data, err)
	}
	if err := sys.WriteFile(src, []byte("edited!!\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var ae *apperr.Error
	if data, err := f.Bytes(sys); !errors.As(err, &ae) || ae.Code != apperr.IOFailed || data != nil {
		t.Fatalf("Bytes of a changed source = %q, %v", data, err)
	}
	// Bytes kept whole are returned as they are, without a read.
	kept := desired.NewFile("", "", target.DesiredFile{Data: []byte("made"), Src: "/nowhere"}, "")
	if data, err := kept.Bytes(sys); err != nil || string(data) != "made" {
		t.Fatalf("Bytes of kept data = %q, %v", data, err)
	}
}

// ReadSourceInto reads a source into the buffer it is given when the
// buffer has room, follows a link that now stands where the source was
// (checked against the hash as any source is) and refuses bytes other
// than the ones hashed and what is not a file, on the disk.
func TestReadSourceIntoReusesTheBufferAndFollowsALink(t *testing.T) {
	dir := t.TempDir()
	sys := fsys.NewRealSystem(fsys.RealSystemOptions{})
	src := fsys.AbsPath(filepath.Join(dir, "a.md"))
	body := []byte("compiled\n")
	if err := os.WriteFile(src.String(), body, 0o644); err != nil {
		t.Fatal(err)
	}
	sum := checksum.SHA256Hex(body)
	buf := make([]byte, 0, 64)
	data, err := desired.ReadSourceInto(sys, src, sum, buf)
	if err != nil || string(data) != "compiled\n" {
		t.Fatalf("ReadSourceInto = %q, %v", data, err)
	}
	if &data[:1][0] != &buf[:1][0] {
		t.Error("the bytes were not read into the buffer that had room for them")
	}
	// The source swapped for a link to a copy since it was hashed.
	if err := os.WriteFile(filepath.Join(dir, "copy.md"), body, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(src.String()); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("copy.md", src.String()); err != nil {
		t.Skip("no symlinks here:", err)
	}
	for _, b := range [][]byte{nil, buf} {
		if data, err := desired.ReadSourceInto(sys, src, sum, b); err != nil || string(data) != "compiled\n" {
			t.Fatalf("ReadSourceInto through a link (buffer of %d) = %q, %v", cap(b), data, err)
		}
	}
	// The copy edited since: bytes that fit the buffer but are not the
	// ones hashed are refused, whichever way they were read.
	if err := os.WriteFile(filepath.Join(dir, "copy.md"), []byte("Compiled\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, b := range [][]byte{nil, buf} {
		if data, err := desired.ReadSourceInto(sys, src, sum, b); err == nil {
			t.Fatalf("ReadSourceInto of edited bytes (buffer of %d) = %q, no error", cap(b), data)
		}
	}
	if err := os.Remove(src.String()); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(src.String(), []byte("Compiled\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if data, err := desired.ReadSourceInto(sys, src, sum, buf); err == nil {
		t.Fatalf("ReadSourceInto of an edited file that fits = %q, no error", data)
	}
	if err := os.Remove(src.String()); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(src.String(), 0o755); err != nil {
		t.Fatal(err)
	}
	if data, err := desired.ReadSourceInto(sys, src, sum, buf); err == nil {
		t.Fatalf("ReadSourceInto of a folder = %q, no error", data)
	}
}
