package engine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/engine/gitsource"
	"github.com/agentpack/agentpack/engine/lockfile"
	"github.com/agentpack/agentpack/engine/manifest"
	"github.com/agentpack/agentpack/engine/module"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/targets"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// srcRepo is a local git repository built with go-git for the source tests.
type srcRepo struct {
	tb   testing.TB
	dir  string
	repo *git.Repository
}

func newSrcRepo(tb testing.TB, dir string) *srcRepo {
	tb.Helper()
	r, err := git.PlainInit(dir, false)
	if err != nil {
		tb.Fatal(err)
	}
	return &srcRepo{tb: tb, dir: dir, repo: r}
}

// commit writes files (path → content; a "+x " prefix makes the file
// executable), deletes the paths in remove, commits everything and returns
// the commit id.
func (s *srcRepo) commit(files map[string]string, remove ...string) string {
	s.tb.Helper()
	wt, err := s.repo.Worktree()
	if err != nil {
		s.tb.Fatal(err)
	}
	for p, c := range files {
		full := filepath.Join(s.dir, filepath.FromSlash(p))
		mode := os.FileMode(0o644)
		if rest, ok := strings.CutPrefix(c, "+x "); ok {
			c, mode = rest, 0o755
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			s.tb.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), mode); err != nil {
			s.tb.Fatal(err)
		}
	}
	for _, p := range remove {
		if err := os.Remove(filepath.Join(s.dir, filepath.FromSlash(p))); err != nil {
			s.tb.Fatal(err)
		}
	}
	if err := wt.AddWithOptions(&git.AddOptions{All: true}); err != nil {
		s.tb.Fatal(err)
	}
	h, err := wt.Commit("c", &git.CommitOptions{All: true, Author: &object.Signature{Name: "t", Email: "t@t", When: time.Now()}})
	if err != nil {
		s.tb.Fatal(err)
	}
	return h.String()
}

// objectHash is git's own id of path at commit.
func (s *srcRepo) objectHash(commit, path string) string {
	s.tb.Helper()
	c, err := s.repo.CommitObject(plumbing.NewHash(commit))
	if err != nil {
		s.tb.Fatal(err)
	}
	tree, err := c.Tree()
	if err != nil {
		s.tb.Fatal(err)
	}
	if path == "" {
		return tree.Hash.String()
	}
	ent, err := tree.FindEntry(path)
	if err != nil {
		s.tb.Fatalf("%s at %s: %v", path, commit, err)
	}
	return ent.Hash.String()
}

func (s *srcRepo) url() string { return "file://" + filepath.ToSlash(s.dir) }

const sourcesManifest = `# my agentpack repo
version: 1
profiles:
  default: {include_tags: [base]} # the default profile
targets:
  codex: {scope: project}
modules: []
# trailing comment
`

func artifactByPath(as []engine.Artifact, p string) *engine.Artifact {
	for i := range as {
		if as[i].Path == p {
			return &as[i]
		}
	}
	return nil
}

func srcManifest(t *testing.T, repo string) *manifest.Manifest {
	t.Helper()
	m, err := loadManifest(repo)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func srcWantCode(t *testing.T, err error, code apperr.Code) {
	t.Helper()
	if apperr.CodeOf(err) != code {
		t.Fatalf("want %s, got %v", code, err)
	}
}

// TestSourceLifecycle walks add → scan → candidates → upstream changes →
// diff (pin kept) → update (pin moved, module re-locked) → remove.
func TestSourceLifecycle(t *testing.T) {
	env := testEnv(t)
	up := newSrcRepo(t, filepath.Join(t.TempDir(), "up"))
	c1 := up.commit(map[string]string{
		"skills/review/SKILL.md":       "---\nname: review\ndescription: Reviews code\n---\nv1\n",
		"skills/review/scripts/run.sh": "+x #!/bin/sh\necho hi\n",
		"prompts/ask.md":               "---\ndescription: Ask a question\n---\nask\n",
		"prompts/README.md":            "not a prompt\n",
		"commands/fix.md":              "---\ndescription: Fix it\n---\nfix\n",
		"agents/helper.md":             "---\nname: helper\ndescription: Helps\n---\nhelp\n",
		"agents/notes.md":              "no frontmatter, not an agent\n",
		"instructions/style.md":        "be nice\n",
		"AGENTS.md":                    "# root\n",
		"README.md":                    "readme\n",
		"docs/other.md":                "other\n",
	})
	repo := writeRepo(t, map[string]string{"agentpack.yaml": sourcesManifest})
	e := engine.New(env, targets.NewSet())
	req := engine.Request{Repo: repo}

	add, _, err := e.SourceAdd(context.Background(), req, engine.SourceAddOptions{Spec: up.url()})
	if err != nil {
		t.Fatal(err)
	}
	if add.Source.Name != "up" || add.Source.Commit != c1 || !add.Source.Cached || add.ArtifactCount != 6 {
		t.Fatalf("add: %+v", add)
	}
	text := mustRead(t, filepath.Join(repo, "agentpack.yaml"))
	for _, want := range []string{"# my agentpack repo", "# the default profile", "# trailing comment", "commit: " + c1} {
		if !strings.Contains(text, want) {
			t.Fatalf("agentpack.yaml lacks %q after source add:\n%s", want, text)
		}
	}
	if _, _, err := e.SourceAdd(context.Background(), req, engine.SourceAddOptions{Spec: up.url()}); apperr.CodeOf(err) != apperr.SourceAlreadyExists {
		t.Fatalf("duplicate add: want E_SOURCE_ALREADY_EXISTS, got %v", err)
	}

	scan, _, err := e.SourceScan(context.Background(), req, "up", "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range scan.Artifacts {
		got = append(got, fmt.Sprintf("%s %s %s %q", a.Type, a.Name, a.Path, a.Description))
		if want := up.objectHash(c1, a.Path); a.TreeHash != want {
			t.Errorf("%s: tree_hash %s, git says %s", a.Path, a.TreeHash, want)
		}
	}
	want := []string{
		`skill review skills/review "Reviews code"`,
		`instructions agents AGENTS.md ""`,
		`instructions style instructions/style.md ""`,
		`prompt ask prompts/ask.md "Ask a question"`,
		`command fix commands/fix.md "Fix it"`,
		`agent helper agents/helper.md "Helps"`,
	}
	if !slices.Equal(got, want) {
		t.Fatalf("scan:\n got %q\nwant %q", got, want)
	}
	review := artifactByPath(scan.Artifacts, "skills/review")
	if review.SourceSpec != "git:"+up.url()+"#ref="+c1+"&subdir=skills/review" {
		t.Fatalf("source_spec %q", review.SourceSpec)
	}

	// A module made from the scan's source spec is in use, not a candidate.
	sp, err := gitsource.ParseSpec(review.SourceSpec)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.AddModule(context.Background(), req, module.Module{ID: "skill:review", Type: module.TypeSkill, Tags: []string{"base"},
		Source: module.Source{Git: &module.GitSource{URL: sp.URL, Ref: sp.Ref, Subdir: sp.Subdir}}}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.Lock(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	cands, _, err := e.SourceCandidates(context.Background(), req, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(cands.Candidates) != 5 || artifactByPath(cands.Candidates, "skills/review") != nil {
		t.Fatalf("candidates: %+v", cands.Candidates)
	}
	scan, _, _ = e.SourceScan(context.Background(), req, "up", "skill")
	if len(scan.Artifacts) != 1 || !slices.Equal(scan.Artifacts[0].UsedBy, []string{"skill:review"}) {
		t.Fatalf("scan --type skill: %+v", scan.Artifacts)
	}

	// Upstream adds, modifies and removes artifacts.
	c2 := up.commit(map[string]string{
		"skills/review/SKILL.md": "---\nname: review\ndescription: Reviews code\n---\nv2\n",
		"prompts/new.md":         "new\n",
	}, "commands/fix.md")
	lockBefore := mustRead(t, filepath.Join(repo, lockfile.FileName))
	diff, _, err := e.SourceDiff(context.Background(), req, "up")
	if err != nil {
		t.Fatal(err)
	}
	if diff.FromCommit != c1 || diff.ToCommit != c2 || diff.UpToDate {
		t.Fatalf("diff commits: %+v", diff)
	}
	if len(diff.New) != 1 || diff.New[0].Path != "prompts/new.md" ||
		len(diff.Modified) != 1 || diff.Modified[0].Path != "skills/review" ||
		diff.Modified[0].OldTreeHash != up.objectHash(c1, "skills/review") || diff.Modified[0].TreeHash != up.objectHash(c2, "skills/review") ||
		len(diff.Removed) != 1 || diff.Removed[0].Path != "commands/fix.md" || diff.Unchanged != 4 {
		t.Fatalf("diff: new %+v modified %+v removed %+v unchanged %d", diff.New, diff.Modified, diff.Removed, diff.Unchanged)
	}
	if m := srcManifest(t, repo); m.Sources[0].Commit != c1 {
		t.Fatalf("diff moved the pin to %s", m.Sources[0].Commit)
	}
	if mustRead(t, filepath.Join(repo, lockfile.FileName)) != lockBefore {
		t.Fatal("diff changed the lockfile")
	}

	upd, _, err := e.SourceUpdate(context.Background(), req, engine.SourceUpdateOptions{Name: "up"})
	if err != nil {
		t.Fatal(err)
	}
	if len(upd.Updated) != 1 || !upd.Updated[0].Changed || upd.Updated[0].ToCommit != c2 ||
		len(upd.Relocked) != 1 || upd.Relocked[0] != (engine.RelockedModule{ID: "skill:review", Source: "up", FromCommit: c1, ToCommit: c2, RefRewritten: true}) {
		t.Fatalf("update: %+v", upd)
	}
	m := srcManifest(t, repo)
	if m.Sources[0].Commit != c2 || m.Modules[0].Source.Git.Ref != c2 {
		t.Fatalf("after update: source %+v module %+v", m.Sources[0], m.Modules[0].Source.Git)
	}
	lf, err := lockfile.Load(filepath.Join(repo, lockfile.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if g := lf.Find("skill:review").ResolvedSource.Git; g.Commit != c2 {
		t.Fatalf("lockfile still pins %s", g.Commit)
	}
	text = mustRead(t, filepath.Join(repo, "agentpack.yaml"))
	if !strings.Contains(text, "# the default profile") || !strings.Contains(text, "# trailing comment") {
		t.Fatalf("comments lost:\n%s", text)
	}
	// The new pin plans: the module deploys v2.
	if _, _, err := e.Deploy(context.Background(), req, true, engine.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, filepath.Join(env.Cwd, ".agents/skills/review/SKILL.md")); !strings.Contains(got, "v2") {
		t.Fatalf("deployed %q", got)
	}
	// Up to date now: a second update changes nothing.
	upd, _, err = e.SourceUpdate(context.Background(), req, engine.SourceUpdateOptions{All: true})
	if err != nil || upd.Updated[0].Changed || len(upd.Relocked) != 0 {
		t.Fatalf("second update: %+v %v", upd, err)
	}

	// Remove with --purge-cache keeps the commit the lockfile pins.
	rm, w, err := e.SourceRemove(context.Background(), req, "up", true)
	if err != nil {
		t.Fatal(err)
	}
	if len(rm.PurgedPaths) != 1 || filepath.Base(rm.PurgedPaths[0]) != c1 || len(w) == 0 {
		t.Fatalf("remove: %+v warnings %q", rm, w)
	}
	if _, err := e.GitCache().Dir(up.url(), c2); err != nil {
		t.Fatalf("pinned checkout purged: %v", err)
	}
	if m := srcManifest(t, repo); len(m.Sources) != 0 || len(m.Modules) != 1 {
		t.Fatalf("after remove: %+v", m.Sources)
	}
}

func TestSourceErrors(t *testing.T) {
	env := testEnv(t)
	up := newSrcRepo(t, filepath.Join(t.TempDir(), "up"))
	up.commit(map[string]string{"skills/a/SKILL.md": "---\nname: a\ndescription: d\n---\n"})
	repo := writeRepo(t, map[string]string{"agentpack.yaml": sourcesManifest})
	e := engine.New(env, targets.NewSet())
	req := engine.Request{Repo: repo}
	before := mustRead(t, filepath.Join(repo, "agentpack.yaml"))

	for _, spec := range []string{"http://example.com/o/r.git", "ftp://example.com/o/r.git", "local:./x", "./relative", "pkg:@a/b"} {
		_, _, err := e.SourceAdd(context.Background(), req, engine.SourceAddOptions{Spec: spec})
		if apperr.CodeOf(err) != apperr.SourceURLInvalid {
			t.Errorf("%s: want E_SOURCE_URL_INVALID, got %v", spec, err)
		}
	}
	_, _, err := e.SourceAdd(context.Background(), req, engine.SourceAddOptions{Spec: up.url(), Path: "nope"})
	srcWantCode(t, err, apperr.SourceNotFound)
	_, _, err = e.SourceAdd(context.Background(), req, engine.SourceAddOptions{Spec: up.url(), Name: "bad name"})
	srcWantCode(t, err, apperr.InvalidArgument)
	if got := mustRead(t, filepath.Join(repo, "agentpack.yaml")); got != before {
		t.Fatalf("failed adds changed agentpack.yaml:\n%s", got)
	}

	_, _, err = e.SourceScan(context.Background(), req, "nope", "")
	srcWantCode(t, err, apperr.SourceNotFound)
	if !strings.Contains(apperr.As(err).Hint, "source add") {
		t.Fatalf("hint %q", apperr.As(err).Hint)
	}
	if _, _, err := e.SourceAdd(context.Background(), req, engine.SourceAddOptions{Spec: up.url(), Name: "skills", Path: "skills"}); err != nil {
		t.Fatal(err)
	}
	for _, op := range []func() error{
		func() error { _, _, err := e.SourceScan(context.Background(), req, "nope", ""); return err },
		func() error { _, _, err := e.SourceDiff(context.Background(), req, "nope"); return err },
		func() error { _, _, err := e.SourceCandidates(context.Background(), req, "nope", ""); return err },
		func() error {
			_, _, err := e.SourceUpdate(context.Background(), req, engine.SourceUpdateOptions{Name: "nope"})
			return err
		},
		func() error { _, _, err := e.SourceRemove(context.Background(), req, "nope", false); return err },
	} {
		err := op()
		srcWantCode(t, err, apperr.SourceNotFound)
		if !strings.Contains(apperr.As(err).Hint, "skills") {
			t.Fatalf("hint does not list the sources: %q", apperr.As(err).Hint)
		}
	}
	_, _, err = e.SourceScan(context.Background(), req, "skills", "widget")
	srcWantCode(t, err, apperr.InvalidArgument)
	_, _, err = e.SourceUpdate(context.Background(), req, engine.SourceUpdateOptions{})
	srcWantCode(t, err, apperr.InvalidArgument)

	// Only the source's path is scanned.
	scan, _, err := e.SourceScan(context.Background(), req, "skills", "")
	if err != nil || len(scan.Artifacts) != 1 || scan.Artifacts[0].Path != "skills/a" {
		t.Fatalf("scan below path: %+v %v", scan, err)
	}
}

func TestScanArtifactsRules(t *testing.T) {
	md := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	fsys := fstest.MapFS{
		"x/prompts/sub/a.md":            md("a"),
		"x/commands/README.md":          md("skipped"),
		"node_modules/prompts/b.md":     md("skipped"),
		".github/prompts/c.prompt.md":   md("---\ndescription: C\n---\n"),
		"agents/prompts/d.md":           md("the nearest folder decides"),
		"CLAUDE.md":                     md("root"),
		"sub/AGENTS.md":                 md("not at the root"),
		"tools/skill/SKILL.md":          md("---\nname: s\n---\n"),
		"tools/skill/prompts/inside.md": md("part of the skill"),
		"notes.md":                      md("no"),
		"instructions/base/AGENTS.md":   md("a folder module"),
		"instructions/base/extra.md":    md("part of it"),
		"instructions/solo.md":          md("one file"),
	}
	as, err := engine.ScanArtifacts(fsys, "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range as {
		got = append(got, fmt.Sprintf("%s %s %s %s", a.Type, a.Name, a.Path, a.Description))
	}
	want := []string{"skill skill tools/skill ", "instructions claude CLAUDE.md ", "instructions base instructions/base ",
		"instructions solo instructions/solo.md ", "prompt c .github/prompts/c.prompt.md C",
		"prompt d agents/prompts/d.md ", "prompt a x/prompts/sub/a.md "}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	// A repository that is one skill reports it at path "" named by SKILL.md.
	as, err = engine.ScanArtifacts(fstest.MapFS{"SKILL.md": md("---\nname: solo\ndescription: d\n---\n"), "prompts/p.md": md("p")}, "")
	if err != nil || len(as) != 1 || as[0].Path != "" || as[0].Name != "solo" || as[0].Type != module.TypeSkill {
		t.Fatalf("root skill: %+v %v", as, err)
	}
	// A missing scan root is no artifacts, not an error.
	if as, err := engine.ScanArtifacts(fsys, "gone"); err != nil || len(as) != 0 {
		t.Fatalf("missing root: %+v %v", as, err)
	}
}

func TestParseSourceSpec(t *testing.T) {
	for _, c := range []struct{ spec, url, ref, sub string }{
		{"owner/repo", "https://github.com/owner/repo.git", "", ""},
		{"owner/repo@v1.2", "https://github.com/owner/repo.git", "v1.2", ""},
		{"https://github.com/o/r", "https://github.com/o/r.git", "", ""},
		{"https://github.com/o/r/tree/main/skills/x", "https://github.com/o/r.git", "main", "skills/x"},
		{"git@github.com:o/r.git", "git@github.com:o/r.git", "", ""},
		{"git+https://example.com/o/r.git", "https://example.com/o/r.git", "", ""},
		{"ssh://git@example.com/o/r.git", "ssh://git@example.com/o/r.git", "", ""},
		{"file:///srv/git/r", "file:///srv/git/r", "", ""},
		{"/srv/git/r", "file:///srv/git/r", "", ""},
	} {
		u, ref, sub, err := engine.ParseSourceSpec(c.spec)
		if err != nil || u != c.url || ref != c.ref || sub != c.sub {
			t.Errorf("%s: got (%q, %q, %q, %v), want (%q, %q, %q)", c.spec, u, ref, sub, err, c.url, c.ref, c.sub)
		}
	}
}

// BenchmarkLockFetch locks and fetches 200 git modules spread over 20 local
// repositories into an empty cache: each repository is fetched once (one
// commit each), at most a few at a time.
func BenchmarkLockFetch(b *testing.B) {
	const repos, perRepo = 20, 10
	base := b.TempDir()
	var m strings.Builder
	m.WriteString("version: 1\nprofiles: {default: {include_tags: [base]}}\ntargets: {codex: {scope: project}}\nmodules:\n")
	for r := 0; r < repos; r++ {
		up := newSrcRepo(b, filepath.Join(base, fmt.Sprintf("up%02d", r)))
		files := map[string]string{}
		for s := 0; s < perRepo; s++ {
			files[fmt.Sprintf("skills/s%02d/SKILL.md", s)] = fmt.Sprintf("---\nname: s%02d\ndescription: d\n---\nrepo %d\n", s, r)
			files[fmt.Sprintf("skills/s%02d/ref/notes.md", s)] = strings.Repeat("notes\n", 50)
			fmt.Fprintf(&m, "  - {id: \"skill:r%02ds%02d\", type: skill, tags: [base], source: {git: {url: %q, subdir: skills/s%02d}}}\n",
				r, s, up.url(), s)
		}
		up.commit(files)
	}
	repo := writeRepo(b, map[string]string{"agentpack.yaml": m.String()})
	req := engine.Request{Repo: repo}
	for b.Loop() {
		b.StopTimer()
		env := testEnv(b)
		e := engine.New(env, targets.NewSet())
		b.StartTimer()
		if _, _, err := e.Lock(context.Background(), req); err != nil {
			b.Fatal(err)
		}
		d, _, err := e.Fetch(context.Background(), req)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if len(d.Modules) != repos*perRepo || d.Fetched != repos {
			b.Fatalf("%d modules, %d checkouts", len(d.Modules), d.Fetched)
		}
		urls, _ := os.ReadDir(e.GitCache().Root)
		for _, u := range urls {
			commits, _ := os.ReadDir(filepath.Join(e.GitCache().Root, u.Name()))
			if len(commits) != 1 {
				b.Fatalf("%s holds %d entries, want one commit", u.Name(), len(commits))
			}
		}
		if len(urls) != repos {
			b.Fatalf("%d repos cached, want %d", len(urls), repos)
		}
		b.StartTimer()
	}
}
