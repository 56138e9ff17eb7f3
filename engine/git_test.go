package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/targets"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// upstream is a local git repo built with go-git (no git binary, no network).
type upstream struct {
	t    *testing.T
	dir  string
	repo *git.Repository
}

func newUpstream(t *testing.T) *upstream {
	dir := filepath.Join(t.TempDir(), "up")
	r, err := git.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	return &upstream{t: t, dir: dir, repo: r}
}

func (u *upstream) commit(files map[string]string, tag string) {
	u.t.Helper()
	wt, err := u.repo.Worktree()
	if err != nil {
		u.t.Fatal(err)
	}
	for p, c := range files {
		mustWrite(u.t, filepath.Join(u.dir, p), c)
		if _, err := wt.Add(p); err != nil {
			u.t.Fatal(err)
		}
	}
	h, err := wt.Commit("c", &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@t", When: time.Now()}})
	if err != nil {
		u.t.Fatal(err)
	}
	if tag != "" {
		_ = u.repo.DeleteTag(tag)
		if _, err := u.repo.CreateTag(tag, h, nil); err != nil {
			u.t.Fatal(err)
		}
	}
}

func skillMD(body string) string {
	return "---\nname: review\ndescription: Reviews code\n---\n" + body + "\n"
}

func TestGitSourceLockedAndOffline(t *testing.T) {
	env := testEnv(t)
	up := newUpstream(t)
	up.commit(map[string]string{"skills/review/SKILL.md": skillMD("v1")}, "v1")
	repo := writeRepo(t, map[string]string{"agentpack.yaml": `version: 1
profiles: {default: {include_tags: [base]}}
targets: {codex: {scope: project}}
modules:
  - id: skill:review
    type: skill
    tags: [base]
    source: {git: {url: "file://` + filepath.ToSlash(up.dir) + `", ref: v1, subdir: skills/review}}
`})
	e := engine.New(env, targets.NewSet())
	req := engine.Request{Repo: repo}
	dest := filepath.Join(env.Cwd, ".agents/skills/review/SKILL.md")

	// Without a lockfile the git module cannot be planned.
	if _, _, err := e.Plan(context.Background(), req); apperr.CodeOf(err) != apperr.LockfileMissing {
		t.Fatalf("want E_LOCKFILE_MISSING, got %v", err)
	}
	if _, _, err := e.Lock(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.Deploy(context.Background(), req, true, engine.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, dest); !strings.Contains(got, "v1") {
		t.Fatalf("want v1 deployed, got %q", got)
	}

	// Upstream moves the tag: the plan stays pinned to the locked commit.
	up.commit(map[string]string{"skills/review/SKILL.md": skillMD("v2")}, "v1")
	_, p, err := e.Plan(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Changes) != 0 {
		t.Fatalf("plan moved with upstream: %+v", p.Changes)
	}
	// lock keeps a pin whose source did not change; update moves it.
	if _, _, err := e.Lock(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if _, p, _ = e.Plan(context.Background(), req); len(p.Changes) != 0 {
		t.Fatalf("lock moved an unchanged pin: %+v", p.Changes)
	}
	ud, _, err := e.Update(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if m := ud.Modules[0]; m.PreviousVersion == "" || m.PreviousVersion == m.ResolvedVersion {
		t.Fatalf("update should report the pin it moved: %+v", m)
	}
	_, p, _ = e.Plan(context.Background(), req)
	if len(p.Changes) != 1 || p.Changes[0].Path.String() != dest {
		t.Fatalf("want one update of %s after lock, got %+v", dest, p.Changes)
	}

	// A missing checkout of a pinned commit is fetched again by plan itself.
	if err := os.RemoveAll(filepath.Join(env.AgentpackHome, "cache", "git")); err != nil {
		t.Fatal(err)
	}
	if _, p, err = e.Plan(context.Background(), req); err != nil || len(p.Changes) != 1 {
		t.Fatalf("plan should re-fetch the pinned commit: %v %+v", err, p)
	}

	// Offline: with the upstream gone, the fetched checkout still serves.
	if _, _, err := e.Fetch(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(up.dir); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.Plan(context.Background(), req); err != nil {
		t.Fatalf("offline plan failed: %v", err)
	}

	// A cached file edited on disk is detected and never deployed.
	var cached []string
	_ = filepath.Walk(filepath.Join(env.AgentpackHome, "cache", "git"), func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Name() == "SKILL.md" {
			cached = append(cached, p)
		}
		return nil
	})
	if len(cached) == 0 {
		t.Fatal("no cached checkout found")
	}
	for _, c := range cached {
		if err := os.Chmod(c, 0o644); err != nil {
			t.Fatal(err)
		}
		mustWrite(t, c, "tampered\n")
	}
	_, _, err = e.Deploy(context.Background(), req, true, engine.ApplyOptions{})
	if code := apperr.CodeOf(err); code != apperr.CacheCorrupted && code != apperr.ChecksumMismatch {
		t.Fatalf("want E_CACHE_CORRUPTED or E_CHECKSUM_MISMATCH, got %v", err)
	}
	if got := mustRead(t, dest); !strings.Contains(got, "v1") {
		t.Fatalf("corrupted bytes reached the target: %q", got)
	}
}

// TestRefChangeMakesLockStale: editing a module's ref is noticed like a url
// or subdir change.
func TestRefChangeMakesLockStale(t *testing.T) {
	env := testEnv(t)
	up := newUpstream(t)
	up.commit(map[string]string{"skills/review/SKILL.md": skillMD("v1")}, "v1")
	manifest := `version: 1
profiles: {default: {include_tags: [base]}}
targets: {codex: {scope: project}}
modules:
  - id: skill:review
    type: skill
    tags: [base]
    source: {git: {url: "file://` + filepath.ToSlash(up.dir) + `", ref: REF, subdir: skills/review}}
`
	repo := writeRepo(t, map[string]string{"agentpack.yaml": strings.Replace(manifest, "REF", "master", 1)})
	e := engine.New(env, targets.NewSet())
	req := engine.Request{Repo: repo}
	if _, _, err := e.Lock(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(repo, "agentpack.yaml"), strings.Replace(manifest, "REF", "v1", 1))
	st, _, err := e.Plan(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(st.Warnings, "\n"), "changed its git source") {
		t.Fatalf("want a stale-lock warning, got %v", st.Warnings)
	}
	d, _, err := e.Doctor(context.Background(), req, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range d.Checks {
		if c.Name == "lockfile" && c.Status != engine.CheckWarn {
			t.Fatalf("doctor lockfile check should warn, got %+v", c)
		}
	}
}
