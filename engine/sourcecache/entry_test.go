package sourcecache

import (
	"io/fs"
	"reflect"
	"testing"

	"github.com/agentpack/agentpack/engine/desired"
	"github.com/agentpack/agentpack/engine/target"
	"github.com/agentpack/agentpack/internal/checksum"
	"github.com/agentpack/agentpack/internal/fsys"
)

// An entry round-trips: a copied file comes back as its source path with
// no bytes, made bytes and a source the fingerprint does not cover come
// back whole, and repeated targets, roots and module ids are shared.
func TestEntryRoundTrip(t *testing.T) {
	fps := []fsys.FingerprintEntry{
		{Path: "/repo/agentpack.yaml", Size: 10, Mode: 0o644, MtimeNS: 1700000000123456789, CtimeNS: 1700000000123456789, Ino: 9},
		{Path: "/repo/modules", Listed: true, Mode: fs.ModeDir | 0o755, MtimeNS: 1600000000000000000, Ino: 3},
		{Path: "/repo/modules/s/SKILL.md", Size: 5, Mode: 0o644, Ino: 7, Follow: true},
		{Path: "/repo/modules/t", Missing: true},
	}
	fp := fsys.NewFingerprint(fps)
	skillSum := checksum.SHA256Hex([]byte("skill"))
	root := fsys.AbsPath("/proj/.codex/skills")
	place := &desired.Placement{Target: "codex", Root: root}
	file := func(f target.DesiredFile, sum string) *desired.File {
		out := desired.NewFile(place, f, sum)
		return &out
	}
	files := []*desired.File{
		file(target.DesiredFile{Path: root + "/s/SKILL.md", Data: []byte("skill"), Mode: 0o644,
			ModuleIDs: []string{"skill:s"}, Src: "/repo/modules/s/SKILL.md"}, skillSum),
		file(target.DesiredFile{Path: root + "/s/made.md", Data: []byte("made"), Mode: 0o755,
			ModuleIDs: []string{"skill:s", "skill:t"}, Marked: true}, "bb"),
		file(target.DesiredFile{Path: root + "/s/loose.md", Data: []byte{}, Mode: 0o644,
			Src: "/elsewhere/loose.md"}, "cc"),
	}
	// A source kept as a shared folder and the tail of the file's path.
	dir := fsys.AbsPath("/repo/modules")
	files[0].SetSrc(&dir, len("/s/SKILL.md"))
	in := &Entry{Key: "k", Fingerprint: fp, Repo: "/repo", Targets: []string{"codex"},
		Desired: desired.Restore([]string{"codex"}, []desired.Root{{Target: "codex", Path: root}}, nil, files)}
	data, err := Encode(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(out.Stamp.Entries(), fps) {
		t.Errorf("fingerprint decoded as %+v", out.Stamp.Entries())
	}
	d, err := out.DecodeDesired()
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Files) != 3 {
		t.Fatalf("decoded %d files", len(d.Files))
	}
	got := []*desired.File{d.File(root + "/s/SKILL.md"), d.File(root + "/s/made.md"), d.File(root + "/s/loose.md")}
	if got[0] == nil || got[1] == nil || got[2] == nil || d.File(root+"/s/none.md") != nil {
		t.Fatal("File does not find the decoded files by path")
	}
	if got[0].Data != nil || got[0].Src() != "/repo/modules/s/SKILL.md" || got[0].SHA256 != skillSum || got[0].Path != root+"/s/SKILL.md" {
		t.Errorf("copied file decoded as %+v", got[0])
	}
	if string(got[1].Data) != "made" || got[1].HasSrc() || !got[1].Marked || got[1].Mode != 0o755 || !reflect.DeepEqual(got[1].ModuleIDs, []string{"skill:s", "skill:t"}) {
		t.Errorf("made file decoded as %+v", got[1])
	}
	if got[2].Data == nil || got[2].HasSrc() {
		t.Errorf("a source outside the fingerprint must keep its bytes: %+v", got[2])
	}
	if got[1].Root != root || got[0].Target != "codex" || got[1].ModuleIDs[0] != "skill:s" {
		t.Errorf("symbols decoded wrong: %+v", got[1])
	}
	if got[0].Placement != got[1].Placement || got[0].ModuleIDs[0] != got[1].ModuleIDs[0] {
		t.Errorf("placements and module ids are not shared: %+v", got[:2])
	}
	decode := func(data []byte) error {
		e, err := Decode(data)
		if err == nil {
			_, err = e.DecodeDesired()
		}
		return err
	}
	for i := range data {
		damaged := append([]byte(nil), data...)
		damaged[i] ^= 0x40
		if err := decode(damaged); err == nil {
			t.Fatalf("a file with byte %d flipped decoded", i)
		}
	}
	if err := decode(data[:len(data)-1]); err == nil {
		t.Fatal("a truncated file decoded")
	}
}
