package overlay

import (
	"strings"
	"testing"

	"github.com/agentpack/agentpack/engine/module"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
)

func TestFSKey(t *testing.T) {
	for id, want := range map[string]string{
		"instructions:base": "instructions_base--d39861fff1",
		"prompt:review":     "prompt_review--f892914c82",
	} {
		if got := FSKey(id); got != want {
			t.Errorf("FSKey(%q) = %q, want %q", id, got, want)
		}
	}
	if FSKey("a:b") == FSKey("a/b") {
		t.Error("a:b and a/b share a key")
	}
	long := strings.Repeat("a", 300)
	if k := FSKey(long + "x"); len(k) != 64+2+10 || k == FSKey(long+"y") {
		t.Errorf("long ids: %q", k)
	}
}

func TestNormalizeMachineID(t *testing.T) {
	for in, want := range map[string]string{"Work Laptop": "work-laptop", "  box.local \n": "box-local",
		"a--b": "a--b", "--x--": "x", "../..": "", "MÜNCHEN": "m-nchen", "build_01": "build_01"} {
		if got := NormalizeMachineID(in); got != want {
			t.Errorf("NormalizeMachineID(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestProjectIDSameRemote(t *testing.T) {
	root := fsys.AbsPath("/src/x")
	a := ProjectID("git@github.com:Org/Repo.git", root)
	for _, u := range []string{"https://github.com/org/repo", "http://github.com/org/repo.git"} {
		if b := ProjectID(u, root); b != a {
			t.Errorf("%s gives %s, want %s", u, b, a)
		}
	}
	if len(a) != 16 || ProjectID("", root) == a || ProjectID("", root) != ProjectID("", root) {
		t.Errorf("project ids: %q", a)
	}
}

// memOverlay is an in-memory repo with one module's global overlay.
func memOverlay(t *testing.T, files map[string]string) (fsys.System, fsys.AbsPath, Layer) {
	t.Helper()
	sys := fsys.NewMemSystem()
	repo := fsys.AbsPath("/repo")
	l := Layer{Scope: Global, Dir: Layout{Repo: repo}.ScopeDir(Global, "skill:x")}
	for rel, data := range files {
		if err := sys.WriteFile(l.Dir.Join(fsys.RelPath(rel)), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return sys, repo, l
}

func TestComposeLayers(t *testing.T) {
	sys, repo, l := memOverlay(t, map[string]string{"SKILL.md": "global\n", "extra.md": "added\n", ".agentpack/module_id": "skill:x\n"})
	up := []module.File{{Path: "SKILL.md", Data: []byte("up\n")}, {Path: "ref.md", Data: []byte("ref\n")}}
	missing := Layer{Scope: Machine, Dir: Layout{Repo: repo, MachineID: "m"}.ScopeDir(Machine, "skill:x")}
	c, err := Compose(sys, repo, "skill:x", up, []Layer{l, missing})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range c.Files {
		got[f.Path] = string(f.Data)
	}
	want := map[string]string{"SKILL.md": "global\n", "extra.md": "added\n", "ref.md": "ref\n"}
	if len(got) != len(want) {
		t.Fatalf("files %v, want %v (metadata must not be deployed)", got, want)
	}
	for p, d := range want {
		if got[p] != d {
			t.Errorf("%s = %q, want %q", p, got[p], d)
		}
	}
	if c.Origins["SKILL.md"] != Global || c.Origins["ref.md"] != "" {
		t.Errorf("origins %v", c.Origins)
	}
}

func TestComposeRefusesMixedKinds(t *testing.T) {
	sys, repo, l := memOverlay(t, map[string]string{"SKILL.md": "x\n", ".agentpack/patches/ref.md.patch": "--- a/ref.md\n"})
	_, err := Compose(sys, repo, "skill:x", []module.File{{Path: "SKILL.md", Data: []byte("up\n")}}, []Layer{l})
	if apperr.CodeOf(err) != apperr.ConfigInvalid {
		t.Fatalf("err = %v, want E_CONFIG_INVALID", err)
	}
}

func TestPatchErrors(t *testing.T) {
	up := []module.File{{Path: "a.md", Data: []byte("one\ntwo\n")}}
	for name, patch := range map[string]string{
		"does not apply": "--- a/a.md\n+++ b/a.md\n@@ -1,2 +1,2 @@\n one\n-three\n+four\n",
		"other file":     "--- a/b.md\n+++ b/b.md\n@@ -1,2 +1,2 @@\n one\n-two\n+four\n",
		"two files":      "--- a/a.md\n+++ b/a.md\n@@ -1 +1 @@\n-one\n+1\n--- a/a.md\n+++ b/a.md\n@@ -2 +2 @@\n-two\n+2\n",
	} {
		t.Run(name, func(t *testing.T) {
			sys, repo, l := memOverlay(t, map[string]string{".agentpack/overlay.json": `{"overlay_kind":"patch"}`, ".agentpack/patches/a.md.patch": patch})
			_, err := Compose(sys, repo, "skill:x", up, []Layer{l})
			if apperr.CodeOf(err) != apperr.OverlayPatchApplyFailed {
				t.Fatalf("err = %v, want E_OVERLAY_PATCH_APPLY_FAILED", err)
			}
		})
	}
}

func TestComposeWithDamagedBaselineWarns(t *testing.T) {
	sys, repo, l := memOverlay(t, map[string]string{"SKILL.md": "ours\n", ".agentpack/baseline.json": "{not json"})
	c, err := Compose(sys, repo, "skill:x", []module.File{{Path: "SKILL.md", Data: []byte("up\n")}}, []Layer{l})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "baseline.json cannot be read") || string(c.Files[0].Data) != "ours\n" {
		t.Errorf("warnings %q, files %+v", c.Warnings, c.Files)
	}
	if _, err := Open(sys, repo, "skill:x", l); apperr.CodeOf(err) != apperr.OverlayBaselineUnsupported {
		t.Errorf("rebase of a damaged baseline: %v, want E_OVERLAY_BASELINE_UNSUPPORTED", err)
	}
}

// rebaseOnce runs a rebase of the dir overlay l from base to upstream.
func rebaseOnce(t *testing.T, sys fsys.System, repo fsys.AbsPath, l Layer, base, upstream map[string]string) (*Report, error) {
	t.Helper()
	toFiles := func(m map[string]string) []module.File {
		var fs []module.File
		for p, d := range m {
			fs = append(fs, module.File{Path: p, Data: []byte(d)})
		}
		return fs
	}
	entries, hash := TreeHash(toFiles(base))
	b, _, err := ReadBaseline(sys, l.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if b == nil {
		b = &Baseline{Version: 2, UpstreamSHA256: hash, FileManifest: entries}
	}
	nEntries, nHash := TreeHash(toFiles(upstream))
	in := RebaseInput{ModuleID: "skill:x", Layer: l, Baseline: b, Upstream: toFiles(upstream),
		NewBaseline: &Baseline{Version: 2, UpstreamSHA256: nHash, FileManifest: nEntries},
		Base:        func(rel string) ([]byte, bool, error) { d, ok := base[rel]; return []byte(d), ok, nil }}
	return Rebase(sys, in, RebaseOptions{})
}

// TestRebaseResolvedInPlace follows the original J4: the user resolves a
// conflict by editing the overlay file itself; the next rebase keeps it.
func TestRebaseResolvedInPlace(t *testing.T) {
	base := map[string]string{"SKILL.md": "a\nBASE\nc\n"}
	up := map[string]string{"SKILL.md": "a\nTHEIRS\nc\n"}
	sys, repo, l := memOverlay(t, map[string]string{"SKILL.md": "a\nOURS\nc\n"})
	if _, err := rebaseOnce(t, sys, repo, l, base, up); apperr.CodeOf(err) != apperr.OverlayRebaseConflict {
		t.Fatalf("first rebase: %v, want a conflict", err)
	}
	if d, _ := sys.ReadFile(l.Dir.JoinName("SKILL.md")); string(d) != "a\nOURS\nc\n" {
		t.Fatalf("the conflict changed the overlay: %q", d)
	}
	if _, err := rebaseOnce(t, sys, repo, l, base, up); apperr.CodeOf(err) != apperr.OverlayRebaseConflict {
		t.Fatalf("an unresolved conflict must stay one: %v", err)
	}
	if err := sys.WriteFile(l.Dir.JoinName("SKILL.md"), []byte("a\nRESOLVED\nc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := rebaseOnce(t, sys, repo, l, base, up)
	if err != nil || rep.Summary.ResolvedFiles != 1 {
		t.Fatalf("rebase after resolving: %v %+v", err, rep)
	}
	if d, _ := sys.ReadFile(l.Dir.JoinName("SKILL.md")); string(d) != "a\nRESOLVED\nc\n" {
		t.Errorf("the resolution was not kept: %q", d)
	}
	if _, err := sys.Lstat(l.Dir.JoinName(MetaDir).JoinName("conflicts")); err == nil {
		t.Error("conflicts/ is left after a completed rebase")
	}
	b, _, _ := ReadBaseline(sys, l.Dir)
	if _, h := TreeHash([]module.File{{Path: "SKILL.md", Data: []byte(up["SKILL.md"])}}); b.UpstreamSHA256 != h {
		t.Error("the baseline did not move to the new upstream")
	}
}
