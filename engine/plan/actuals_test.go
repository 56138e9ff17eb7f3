package plan

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentpack/agentpack/engine/desired"
	"github.com/agentpack/agentpack/engine/target"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/checksum"
	"github.com/agentpack/agentpack/internal/fsys"
)

// TestReadActualsKeepsOnlyTheBytesAPlanUses: with no stat cache to vouch
// for them, files that hold the desired bytes are read and hashed, and
// only their mode is kept; a file that differs keeps its bytes for a plan
// that keeps them (a diff shows them), else only its hash; a missing one
// nothing.
func TestReadActualsKeepsOnlyTheBytesAPlanUses(t *testing.T) {
	dir := t.TempDir()
	root := fsys.AbsPath(filepath.Join(dir, "root"))
	file := func(name, want, have string, mode os.FileMode) *desired.File {
		p := root.JoinName(name)
		if have != "" {
			if err := os.MkdirAll(string(root), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(string(p), []byte(have), mode); err != nil {
				t.Fatal(err)
			}
		}
		return desired.NewFile("codex", root, target.DesiredFile{Path: p, Data: []byte(want), Mode: 0o644}, checksum.SHA256Hex([]byte(want)))
	}
	big := strings.Repeat("big\n", 40<<10) // past the read buffer
	files := []*desired.File{
		file("same.md", "same\n", "same\n", 0o644),
		file("exec.sh", "run\n", "run\n", 0o755),
		file("edited.md", "new\n", "old\n", 0o644),
		file("missing.md", "gone\n", "", 0),
		file("big.md", big, big, 0o644),
		file("bigger.md", big, big+"more\n", 0o644),
	}
	// Read after the edited file, in the buffer it was read into: its
	// bytes must not change under it.
	for i := range 64 {
		files = append(files, file(fmt.Sprintf("after%02d.md", i), "other bytes\n", "other bytes\n", 0o644))
	}
	sys := fsys.NewRealSystem(fsys.RealSystemOptions{})
	got := readActuals(sys, NewLinkGuard(sys), nil, files, true)
	for i, name := range []string{"same.md", "exec.sh"} { // read, hashed, dropped
		if _, kept := got.other[i]; kept || !got.found[i].vouched {
			t.Errorf("%s holds the desired bytes but its read is kept: %+v", name, got.other[i])
		}
		a, err := got.at(i)
		if err != nil || !a.Exists || a.SHA256 != files[i].SHA256 || a.Data != nil {
			t.Errorf("%s: at = %+v, %v", name, a, err)
		}
	}
	if a, _ := got.at(1); a.Mode != 0o755 {
		t.Errorf("exec.sh's mode is %v, want 0755 (a mode change is an update)", a.Mode)
	}
	if a, err := got.at(2); err != nil || string(a.Data) != "old\n" || a.SHA256 != checksum.SHA256Hex([]byte("old\n")) {
		t.Errorf("edited.md: at = %+v, %v; want its bytes kept", a, err)
	}
	if a, err := got.at(3); err != nil || a.Exists {
		t.Errorf("missing.md: at = %+v, %v", a, err)
	}
	if a, err := got.at(4); err != nil || !a.Exists || a.Data != nil || !got.found[4].vouched {
		t.Errorf("big.md holds the desired bytes: at = %v, %v", a.Exists, err)
	}
	if a, err := got.at(5); err != nil || string(a.Data) != big+"more\n" {
		t.Errorf("bigger.md: at = %v, %v; want its bytes kept", a.Exists, err)
	}
	for i := 6; i < len(files); i++ {
		if !got.found[i].vouched {
			t.Errorf("%s not vouched", files[i].Path)
		}
	}
	// Without keepBefore, a file that differs is known by its hash.
	got = readActuals(sys, NewLinkGuard(sys), nil, files, false)
	for _, i := range []int{2, 5} {
		a, err := got.at(i)
		if err != nil || !a.Exists || a.Data != nil || a.SHA256 == files[i].SHA256 || a.SHA256 == "" {
			t.Errorf("%s without keepBefore: at = %v %q %d bytes, %v", files[i].Path, a.Exists, a.SHA256, len(a.Data), err)
		}
	}
}

// TestBeforeBytesReadsTheFileThePlanHashed: a change whose plan kept only
// the hash of the bytes it replaces gets them from the file while it still
// holds them, and an error naming the edit once it does not.
func TestBeforeBytesReadsTheFileThePlanHashed(t *testing.T) {
	dir := t.TempDir()
	root := fsys.AbsPath(dir)
	path := root.JoinName("f.md")
	if err := os.WriteFile(string(path), []byte("before\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sum := checksum.SHA256Hex([]byte("before\n"))
	after := checksum.SHA256Hex([]byte("after\n"))
	p := &Plan{Sys: fsys.NewRealSystem(fsys.RealSystemOptions{})}
	c := &Change{Op: OpUpdate, Path: path, Root: root, BeforeSHA256: &sum, AfterSHA256: &after}
	if got, err := p.BeforeBytes(c); err != nil || string(got) != "before\n" {
		t.Fatalf("BeforeBytes = %q, %v", got, err)
	}
	c.SetBytes([]byte("held\n"), nil)
	if got, err := p.BeforeBytes(c); err != nil || string(got) != "held\n" {
		t.Fatalf("BeforeBytes of held bytes = %q, %v", got, err)
	}
	c.SetBytes(nil, nil)
	if err := os.WriteFile(string(path), []byte("edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := p.BeforeBytes(c); apperr.CodeOf(err) != apperr.DriftConflict || got != nil {
		t.Fatalf("BeforeBytes of an edited file = %q, %v; want E_DRIFT_CONFLICT", got, err)
	}
}
