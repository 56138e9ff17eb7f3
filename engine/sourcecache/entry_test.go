package sourcecache

import (
	"bytes"
	"fmt"
	"io/fs"
	"reflect"
	"slices"
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
		{Path: "/repo/modules/s/ref/a.md", Size: 1, Mode: 0o644, Ino: 8, Follow: true},
		{Path: "/repo/modules/t", Missing: true},
	}
	fp := fsys.NewFingerprint(fps)
	skillSum := checksum.SHA256Hex([]byte("skill"))
	root := fsys.AbsPath("/proj/.codex/skills")
	// Files of one module share an origin, their sources its folder.
	origins := desired.Origins{}
	file := func(f target.DesiredFile, sum string, dir fsys.AbsPath, tail int) *desired.File {
		out := desired.NewFileOf(origins.Get("codex", root, f.ModuleIDs, dir), f, sum, f.Src != "", tail)
		return &out
	}
	files := []*desired.File{
		file(target.DesiredFile{Path: root + "/s/SKILL.md", Data: []byte("skill"), Mode: 0o644,
			ModuleIDs: []string{"skill:s"}, Src: "/repo/modules/s/SKILL.md"}, skillSum, "/repo/modules", len("/s/SKILL.md")),
		file(target.DesiredFile{Path: root + "/s/made.md", Data: []byte("made"), Mode: 0o755,
			ModuleIDs: []string{"skill:s", "skill:t"}, Marked: true}, "bb", "", 0),
		file(target.DesiredFile{Path: root + "/s/loose.md", Data: []byte{}, Mode: 0o644,
			Src: "/elsewhere/loose.md"}, "cc", "/elsewhere/loose.md", 0),
		file(target.DesiredFile{Path: root + "/s/ref/a.md", Data: []byte("a"), Mode: 0o644,
			ModuleIDs: []string{"skill:s"}, Src: "/repo/modules/s/ref/a.md"}, checksum.SHA256Hex([]byte("a")), "/repo/modules", len("/s/ref/a.md")),
	}
	in := &Entry{Key: "k", Fingerprint: fp, Repo: "/repo", Targets: []string{"codex"},
		Desired: desired.Restore([]string{"codex"}, []desired.Root{{Target: "codex", Path: root}}, nil, files)}
	var buf bytes.Buffer
	if err := Encode(&buf, in); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
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
	if len(d.Files) != 4 {
		t.Fatalf("decoded %d files", len(d.Files))
	}
	got := []*desired.File{d.File(root + "/s/SKILL.md"), d.File(root + "/s/made.md"), d.File(root + "/s/loose.md"), d.File(root + "/s/ref/a.md")}
	if slices.Contains(got, nil) || d.File(root+"/s/none.md") != nil {
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
	if got[0].Origin != got[3].Origin || got[3].Src() != "/repo/modules/s/ref/a.md" || got[1].ModuleIDs[0] != got[0].ModuleIDs[0] {
		t.Errorf("origins and module ids are not shared: %+v", got)
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

// An entry far larger than the stream's buffer round-trips: it is written
// out a chunk at a time, its checksum over every chunk, and its
// fingerprint is checked a chunk at a time.
func TestLargeEntryRoundTrip(t *testing.T) {
	const n = 20000
	root := fsys.AbsPath("/proj/.codex/skills")
	origins := desired.Origins{}
	var fps []fsys.FingerprintEntry
	files := make([]*desired.File, n)
	for i := range files {
		rel := fmt.Sprintf("/s%05d/ref/f.md", i)
		fps = append(fps, fsys.FingerprintEntry{Path: fsys.AbsPath("/repo/modules" + rel), Size: int64(i), MtimeNS: int64(i) * 1000, Ino: uint64(i)})
		f := desired.NewFileOf(origins.Get("codex", root, []string{fmt.Sprintf("skill:s%05d", i)}, "/repo/modules"),
			target.DesiredFile{Path: root + fsys.AbsPath(rel), Mode: 0o644}, checksum.SHA256Hex([]byte(rel)), true, len(rel))
		files[i] = &f
	}
	in := &Entry{Key: "k", Fingerprint: fsys.NewFingerprint(fps), Desired: desired.Restore([]string{"codex"}, []desired.Root{{Target: "codex", Path: root}}, nil, files)}
	var buf bytes.Buffer
	if err := Encode(&buf, in); err != nil {
		t.Fatal(err)
	}
	out, err := Decode(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if got := out.Stamp.Entries(); !reflect.DeepEqual(got, fps) {
		t.Fatalf("fingerprint of %d entries decoded as %d", len(fps), len(got))
	}
	d, err := out.DecodeDesired()
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range d.Files {
		if f.Path != files[i].Path || f.SHA256 != files[i].SHA256 || f.Src() != fps[i].Path || f.ModuleIDs[0] != files[i].ModuleIDs[0] {
			t.Fatalf("file %d decoded as %+v", i, f)
		}
	}
}
