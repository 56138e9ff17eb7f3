package desired_test

import (
	"errors"
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
