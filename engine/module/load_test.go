package module

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentpack/agentpack/internal/checksum"
	"github.com/agentpack/agentpack/internal/fsys"
)

// realSys is the System the tests over t.TempDir() load through.
var realSys = fsys.NewRealSystem(fsys.RealSystemOptions{})

// memTree writes files (a body starting with "-> " makes a symlink holding
// the rest, a name ending in ".sh" an executable) under root in sys.
func memTree(t *testing.T, sys fsys.System, root fsys.AbsPath, files map[string]string) {
	t.Helper()
	for rel, body := range files {
		p := root.Join(fsys.RelPath(rel))
		if err := sys.MkdirAll(p.Dir(), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		mode := fs.FileMode(0o644)
		if strings.HasSuffix(rel, ".sh") {
			mode = 0o755
		}
		if target, ok := strings.CutPrefix(body, "-> "); ok {
			err = sys.Symlink(filepath.FromSlash(target), p)
		} else {
			err = sys.WriteFile(p, []byte(body), mode)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestLoadModuleFromMemSystem(t *testing.T) {
	// The root is a path that does not exist on disk, so a read that went
	// to the real disk instead of sys would fail.
	root := fsys.AbsPath(filepath.Join(t.TempDir(), "not-on-disk"))
	if _, err := os.Lstat(root.String()); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("%s exists on disk: %v", root, err)
	}
	sys := fsys.NewMemSystem()
	memTree(t, sys, root, map[string]string{
		"repo/skills/review/SKILL.md":     skillMD,
		"repo/skills/review/docs/a.md":    "a",
		"repo/skills/review/alias.md":     "-> docs/a.md",
		"repo/skills/review/more":         "-> docs",
		"repo/skills/review/run.sh":       "#!/bin/sh",
		"repo/skills/review/.git/config":  "x",
		"repo/skills/leaky/SKILL.md":      skillMD,
		"repo/skills/leaky/x.md":          "-> ../../shared/p.md",
		"repo/prompts/p.md":               "---\ndescription: p\n---\nhello\n",
		"repo/prompts/shared.md":          "-> ../shared/p.md",
		"repo/shared/p.md":                "shared",
		"repo/skills/review/docs/loop.md": "-> loop.md",
	})
	skill := &Module{ID: "skill:review", Type: TypeSkill}

	// test that a folder module with a link inside it loads from the MemSystem alone: the link as its target, .git skipped
	_, err := LoadModule(sys, skill, root.Join("repo/skills/review").String())
	wantRefused(t, err, root.Join("repo/skills/review/docs/loop.md").String(), "loop.md", linkLoops)
	if err := sys.Remove(root.Join("repo/skills/review/docs/loop.md")); err != nil {
		t.Fatal(err)
	}
	lm, err := LoadModule(sys, skill, root.Join("repo/skills/review").String())
	if err != nil {
		t.Fatal(err)
	}
	want := "SKILL.md=" + strings.TrimSpace(skillMD) + "\nalias.md=a\ndocs/a.md=a\nmore/a.md=a\nrun.sh=#!/bin/sh"
	if got := loaded(lm); got != want {
		t.Errorf("files:\n%s\nwant:\n%s", got, want)
	}
	for _, f := range lm.Files {
		wantMode := fs.FileMode(0o644)
		if f.Path == "run.sh" {
			wantMode = 0o755
		}
		if f.Mode != wantMode {
			t.Errorf("%s: mode %v, want %v", f.Path, f.Mode, wantMode)
		}
	}
	if lm.Frontmatter.String("name") != "review" {
		t.Errorf("frontmatter = %v", lm.Frontmatter)
	}

	// test that a link leaving a module folder in the MemSystem is refused by the same rule as on disk
	_, err = LoadModule(sys, &Module{ID: "skill:leaky", Type: TypeSkill}, root.Join("repo/skills/leaky").String())
	wantRefused(t, err, root.Join("repo/skills/leaky/x.md").String(), "../../shared/p.md", linkLeaves)

	// test that a single-file module loads from the MemSystem, and one that is a link resolves inside within
	prompt := &Module{ID: "prompt:p", Type: TypePrompt}
	if lm, err := LoadModule(sys, prompt, root.Join("repo/prompts/p.md").String()); err != nil || string(lm.Body) != "hello\n" {
		t.Errorf("prompts/p.md = %v, %v", lm, err)
	}
	lm, err = LoadModuleIn(sys, &Module{ID: "instructions:x", Type: TypeInstructions}, root.Join("repo/prompts/shared.md").String(), root.Join("repo").String())
	if err != nil || loaded(lm) != "shared.md=shared" {
		t.Errorf("prompts/shared.md within the repo = %v, %v", lm, err)
	}
	_, err = LoadModule(sys, prompt, root.Join("repo/prompts/shared.md").String())
	wantRefused(t, err, root.Join("repo/prompts/shared.md").String(), "../shared/p.md", linkLeaves)

	// test that a path missing from the MemSystem is reported as missing
	if _, err := LoadModule(sys, prompt, root.Join("repo/prompts/none.md").String()); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing path = %v", err)
	}
}

// TestLoadHashesKeepsOnlyTheMainFile checks that LoadHashesIn reads every
// file once with the same hashes, modes and sources as LoadFilesIn, keeps
// the bytes only of a file that can be the main one, and that the module
// validates from them; on the disk and through a System without
// fsys.RegularReader.
func TestLoadHashesKeepsOnlyTheMainFile(t *testing.T) {
	root := fsys.AbsPath(t.TempDir())
	for _, sys := range []fsys.System{realSys, fsys.NewMemSystem()} {
		memTree(t, sys, root, map[string]string{
			"s/SKILL.md":  skillMD,
			"s/ref/a.md":  strings.Repeat("a", 100<<10), // more than a read buffer
			"s/run.sh":    "#!/bin/sh",
			"s/alias.md":  "-> ref/a.md",
			"s/empty.txt": "",
		})
		mod := &Module{ID: "skill:s", Type: TypeSkill}
		full, err := LoadFilesIn(sys, mod, root.JoinName("s").String(), "")
		if err != nil {
			t.Fatal(err)
		}
		hashed, err := LoadHashesIn(sys, mod, root.JoinName("s").String(), "")
		if err != nil {
			t.Fatal(err)
		}
		if len(full) != len(hashed) {
			t.Fatalf("%d files, hashed %d", len(full), len(hashed))
		}
		for i, f := range hashed {
			want := full[i]
			if f.Path != want.Path || f.SHA256 != want.SHA256 || f.Mode != want.Mode || f.Src != want.Src || f.SHA256 != checksum.SHA256Hex(want.Data) {
				t.Errorf("%s: hashed %+v, read %+v", f.Path, f, want)
			}
			if (f.Data != nil) != (f.Path == "SKILL.md") {
				t.Errorf("%s: kept %d bytes", f.Path, len(f.Data))
			}
		}
		if _, err := NewLoaded(mod, root.JoinName("s").String(), hashed); err != nil {
			t.Error(err)
		}
	}
}
