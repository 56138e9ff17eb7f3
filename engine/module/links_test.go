package module

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/agentpack/agentpack/engine/gitsource"
	"github.com/agentpack/agentpack/internal/apperr"
)

const skillMD = "---\nname: review\ndescription: Reviews code\n---\nReview.\n"

// tree writes files (a body starting with "-> " makes a symlink holding the
// rest) under dir.
func tree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for rel, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		if target, ok := strings.CutPrefix(body, "-> "); ok {
			err = os.Symlink(filepath.FromSlash(target), p)
		} else {
			err = os.WriteFile(p, []byte(body), 0o644)
		}
		if err != nil {
			t.Skip("cannot create", rel, err)
		}
	}
}

// loaded describes a module's files as "path=content" lines.
func loaded(lm *LoadedModule) string {
	var lines []string
	for _, f := range lm.Files {
		lines = append(lines, f.Path+"="+strings.TrimSpace(string(f.Data)))
	}
	return strings.Join(lines, "\n")
}

// wantRefused checks that err is E_MODULE_INVALID naming the link, its
// target and the reason.
func wantRefused(t *testing.T, err error, link, target, why string) {
	t.Helper()
	if apperr.CodeOf(err) != apperr.ModuleInvalid {
		t.Fatalf("want E_MODULE_INVALID, got %v", err)
	}
	e := apperr.As(err)
	if !strings.Contains(e.Message, link) || !strings.Contains(e.Message, "-> "+filepath.FromSlash(target)) || !strings.Contains(e.Message, why) {
		t.Errorf("message %q does not name %s -> %s (%s)", e.Message, link, target, why)
	}
	if e.Details["link"] != link || e.Details["target"] != filepath.FromSlash(target) || e.Details["reason"] != why {
		t.Errorf("details = %v", e.Details)
	}
}

func TestFolderModuleLinks(t *testing.T) {
	base := map[string]string{"mod/SKILL.md": skillMD, "mod/docs/a.md": "a", "outside.md": "secret"}
	tests := []struct {
		name  string
		files map[string]string
		want  string // loaded files, or
		link  string // the link refused
		why   string
	}{
		{name: "file link inside", files: map[string]string{"mod/alias.md": "-> docs/a.md"},
			want: "SKILL.md=" + strings.TrimSpace(skillMD) + "\nalias.md=a\ndocs/a.md=a"},
		{name: "folder link inside", files: map[string]string{"mod/more": "-> docs", "mod/docs/b.md": "-> a.md"},
			want: "SKILL.md=" + strings.TrimSpace(skillMD) + "\ndocs/a.md=a\ndocs/b.md=a\nmore/a.md=a\nmore/b.md=a"},
		{name: "git folder skipped", files: map[string]string{"mod/.git/config": "x"},
			want: "SKILL.md=" + strings.TrimSpace(skillMD) + "\ndocs/a.md=a"},
		{name: "leaves", files: map[string]string{"mod/x.md": "-> ../outside.md"}, link: "mod/x.md", why: linkLeaves},
		{name: "leaves and comes back", files: map[string]string{"mod/x.md": "-> ../mod/docs/a.md"}, link: "mod/x.md", why: linkLeaves},
		{name: "deep leaves", files: map[string]string{"mod/docs/x.md": "-> ../../outside.md"}, link: "mod/docs/x.md", why: linkLeaves},
		{name: "absolute", files: map[string]string{"mod/x.md": "-> ABS/mod/docs/a.md"}, link: "mod/x.md", why: linkAbsolute},
		{name: "dangles", files: map[string]string{"mod/x.md": "-> nope.md"}, link: "mod/x.md", why: linkDangles},
		{name: "through a file", files: map[string]string{"mod/x.md": "-> docs/a.md/b"}, link: "mod/x.md", why: linkDangles},
		{name: "loops", files: map[string]string{"mod/x.md": "-> y.md", "mod/y.md": "-> x.md"}, link: "mod/x.md", why: linkLoops},
		{name: "folder loop", files: map[string]string{"mod/docs/up": "-> .."}, link: "mod/docs/up", why: linkLoops},
		{name: "root loop", files: map[string]string{"mod/self": "-> ."}, link: "mod/self", why: linkLoops},
		{name: "mutual folder loop", files: map[string]string{"mod/p/q": "-> ../r", "mod/r/s": "-> ../p"}, link: "mod/r/s", why: linkLoops},
		{name: "leaves through another link", files: map[string]string{"mod/x.md": "-> y.md", "mod/y.md": "-> ../outside.md"}, link: "mod/x.md", why: linkLeaves},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			files := map[string]string{}
			for k, v := range base {
				files[k] = v
			}
			for k, v := range tc.files {
				files[k] = strings.Replace(v, "ABS", filepath.ToSlash(dir), 1)
			}
			tree(t, dir, files)
			lm, err := LoadModule(realSys, &Module{ID: "skill:review", Type: TypeSkill}, filepath.Join(dir, "mod"))
			if tc.link == "" {
				if err != nil {
					t.Fatal(err)
				}
				if got := loaded(lm); got != tc.want {
					t.Errorf("files:\n%s\nwant:\n%s", got, tc.want)
				}
				for _, f := range lm.Files {
					if f.Mode != 0o644 {
						t.Errorf("%s: mode %v", f.Path, f.Mode)
					}
				}
				return
			}
			wantRefused(t, err, filepath.Join(dir, filepath.FromSlash(tc.link)), files[tc.link][3:], tc.why)
		})
	}
}

func TestModulePathLinks(t *testing.T) {
	dir := t.TempDir()
	tree(t, dir, map[string]string{
		"repo/prompts/real.md":      "real",
		"repo/prompts/alias.md":     "-> real.md",
		"repo/prompts/out.md":       "-> ../../elsewhere/secret.md",
		"repo/prompts/abs.md":       "-> " + filepath.ToSlash(filepath.Join(dir, "repo/prompts/real.md")),
		"repo/prompts/gone.md":      "-> nope.md",
		"repo/skills/real/SKILL.md": skillMD,
		"repo/skills/alias":         "-> real",
		"repo/skills/out":           "-> ../../elsewhere/skill",
		"elsewhere/secret.md":       "secret",
		"elsewhere/skill/SKILL.md":  skillMD,
	})
	prompt := func(name string) (*LoadedModule, error) {
		return LoadModule(realSys, &Module{ID: "prompt:p", Type: TypePrompt}, filepath.Join(dir, "repo/prompts", name))
	}
	skill := func(name string) (*LoadedModule, error) {
		return LoadModule(realSys, &Module{ID: "skill:review", Type: TypeSkill}, filepath.Join(dir, "repo/skills", name))
	}

	// test that a single-file module linking inside its folder loads the target's bytes under its own name
	lm, err := prompt("alias.md")
	if err != nil {
		t.Fatal(err)
	}
	if got := loaded(lm); got != "alias.md=real" {
		t.Errorf("alias.md loaded as %q", got)
	}

	// test that a single-file module linking out of its folder is refused, not followed
	_, err = prompt("out.md")
	wantRefused(t, err, filepath.Join(dir, "repo/prompts/out.md"), "../../elsewhere/secret.md", linkLeaves)
	if strings.Contains(err.Error(), "secret\n") {
		t.Errorf("the target was read: %v", err)
	}
	_, err = prompt("abs.md")
	wantRefused(t, err, filepath.Join(dir, "repo/prompts/abs.md"), filepath.ToSlash(filepath.Join(dir, "repo/prompts/real.md")), linkAbsolute)
	_, err = prompt("gone.md")
	wantRefused(t, err, filepath.Join(dir, "repo/prompts/gone.md"), "nope.md", linkDangles)

	// test that a folder module that is a link follows the same rule
	if lm, err := skill("alias"); err != nil || loaded(lm) != "SKILL.md="+strings.TrimSpace(skillMD) {
		t.Errorf("skills/alias = %v, %v", lm, err)
	}
	_, err = skill("out")
	wantRefused(t, err, filepath.Join(dir, "repo/skills/out"), "../../elsewhere/skill", linkLeaves)

	// test that a relative module path still loads
	t.Chdir(filepath.Join(dir, "repo"))
	if lm, err := LoadModule(realSys, &Module{ID: "prompt:p", Type: TypePrompt}, filepath.FromSlash("prompts/alias.md")); err != nil || loaded(lm) != "alias.md=real" {
		t.Errorf("relative path = %v, %v", lm, err)
	}

	// test that a missing module path is still reported as missing
	if _, err := prompt("none.md"); apperr.CodeOf(err) != apperr.ModuleInvalid || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing path = %v", err)
	}
}

func TestGitCheckoutLinks(t *testing.T) {
	up := t.TempDir()
	tree(t, up, map[string]string{
		"good/SKILL.md":      skillMD,
		"good/run.sh":        "#!/bin/sh\n",
		"good/alias.md":      "-> SKILL.md",
		"escapes/SKILL.md":   skillMD,
		"escapes/evil":       "-> ../../../etc/passwd",
		"absolute/SKILL.md":  skillMD,
		"absolute/evil":      "-> /etc/passwd",
		"sideways/SKILL.md":  skillMD,
		"sideways/other.md":  "-> ../good/SKILL.md",
		"dangling/SKILL.md":  skillMD,
		"dangling/gone.md":   "-> nope.md",
		"nested/a/SKILL.md":  skillMD,
		"nested/a/b/evil.md": "-> ../../../../outside",
		"alias":              "-> escapes",
	})
	if err := os.Chmod(filepath.Join(up, "good/run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	repo, err := git.PlainInit(up, false)
	if err != nil {
		t.Fatal(err)
	}
	wt, _ := repo.Worktree()
	if err := wt.AddWithOptions(&git.AddOptions{All: true}); err != nil {
		t.Fatal(err)
	}
	sig := &object.Signature{Name: "t", Email: "t@example.com", When: time.Unix(1700000000, 0)}
	if _, err := wt.Commit("c", &git.CommitOptions{Author: sig, Committer: sig}); err != nil {
		t.Fatal(err)
	}
	cache := &gitsource.Cache{Root: filepath.Join(t.TempDir(), "git")}
	_, co, err := cache.Checkout(context.Background(), "file://"+filepath.ToSlash(up), "HEAD", gitsource.FetchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	load := func(sub string) (*LoadedModule, error) {
		return LoadModule(realSys, &Module{ID: "skill:" + sub, Type: TypeSkill}, filepath.Join(co, filepath.FromSlash(sub)))
	}

	// test that a link inside the module loads as its target, with git's modes rather than the cache's read-only ones
	lm, err := load("good")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := loaded(lm), "SKILL.md="+strings.TrimSpace(skillMD)+"\nalias.md="+strings.TrimSpace(skillMD)+"\nrun.sh=#!/bin/sh"; got != want {
		t.Errorf("good:\n%s\nwant:\n%s", got, want)
	}
	for _, f := range lm.Files {
		want := os.FileMode(0o644)
		if f.Path == "run.sh" {
			want = 0o755
		}
		if f.Mode != want {
			t.Errorf("%s: mode %v, want %v", f.Path, f.Mode, want)
		}
	}

	// test that links the cache left out are refused, not silently dropped
	for sub, l := range map[string][2]string{
		"escapes":  {"escapes/evil", "../../../etc/passwd"},
		"dangling": {"dangling/gone.md", "nope.md"},
		"nested/a": {"nested/a/b/evil.md", "../../../../outside"},
		"alias":    {"escapes/evil", "../../../etc/passwd"},
	} {
		_, err := load(sub)
		if apperr.CodeOf(err) != apperr.ModuleInvalid {
			t.Errorf("%s: want E_MODULE_INVALID, got %v", sub, err)
			continue
		}
		if d := apperr.As(err).Details; d["link"] != filepath.Join(co, filepath.FromSlash(l[0])) || d["target"] != l[1] {
			t.Errorf("%s: %v (details %v)", sub, err, d)
		}
	}
	if _, err := load("absolute"); apperr.CodeOf(err) != apperr.ModuleInvalid || !strings.Contains(err.Error(), linkAbsolute) {
		t.Errorf("absolute: %v", err)
	}

	// test that a link kept in the checkout but leaving the module is refused by the same rule as a local one
	_, err = load("sideways")
	wantRefused(t, err, filepath.Join(co, "sideways", "other.md"), "../good/SKILL.md", linkLeaves)
}
