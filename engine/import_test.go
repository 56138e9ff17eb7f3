package engine_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/engine/plan"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/checksum"
	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/agentpack/agentpack/targets"
)

const importManifest = `# desired state
version: 1
profiles:
  default:
    include_tags: [base] # keep this comment
targets:
  codex: {scope: both}
  claude_code: {scope: both}
  cursor: {scope: project}
  vscode: {scope: project}
modules: []
`

// importFixture writes assets of every target into env's home and project
// and returns the paths of the files import should turn into modules.
func importFixture(t *testing.T, env engine.Env) []string {
	t.Helper()
	h, p := env.Home, env.Cwd
	skill := "---\nname: review\ndescription: Reviews code\n---\nreview\n"
	files := map[string]string{
		h + "/.codex/skills/review/SKILL.md":    skill,
		h + "/.codex/skills/.system/x/SKILL.md": "hidden, skipped",
		h + "/.claude/skills/review/SKILL.md":   skill,
		h + "/.codex/prompts/ask.md":            "Ask $ARGUMENTS\n",
		h + "/.claude/CLAUDE.md":                "# my claude rules\n",
		h + "/.claude/commands/fix.md":          "---\ndescription: Fix it\n---\nfix\n",
		h + "/.claude/commands/managed.md":      "---\ndescription: deployed by agentpack\n---\n",
		p + "/AGENTS.md":                        "# project rules\n",
		p + "/.claude/agents/helper.md":         "---\nname: helper\ndescription: Helps\n---\nhelp\n",
		p + "/.claude/agents/bad.md":            "no frontmatter\n",
		p + "/.github/prompts/ask.prompt.md":    "Ask $ARGUMENTS\n",
		p + "/.cursor/rules/style.mdc":          "---\ndescription: style\nalwaysApply: true\n---\nbe nice\n",
		p + "/.cursor/commands/fix.md":          "---\ndescription: Fix it (cursor)\n---\nfix\n",
		h + "/elsewhere/linked/SKILL.md":        "---\nname: linked\ndescription: via a link\n---\n",
		h + "/.claude/.agentpack.manifest.claude_code.json": `{"schema_version": 1, "generated_at": "2026-01-01T00:00:00Z", "tool": "claude_code",
  "managed_files": [{"path": "commands/managed.md", "sha256": "00"}]}`,
	}
	for path, c := range files {
		mustWrite(t, filepath.FromSlash(path), c)
	}
	run := filepath.Join(h, ".codex/skills/review/run.sh")
	for _, r := range []string{run, filepath.Join(h, ".claude/skills/review/run.sh")} {
		mustWrite(t, r, "#!/bin/sh\n")
		if err := os.Chmod(r, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(h, "elsewhere/linked"), filepath.Join(h, ".claude/skills/linked")); err != nil {
		t.Fatal(err)
	}
	return []string{
		h + "/.codex/skills/review/SKILL.md", run, h + "/.claude/skills/review/SKILL.md", h + "/.claude/skills/review/run.sh", h + "/.codex/prompts/ask.md",
		h + "/.claude/CLAUDE.md", h + "/.claude/commands/fix.md", p + "/AGENTS.md", p + "/.claude/agents/helper.md",
		p + "/.github/prompts/ask.prompt.md", p + "/.cursor/commands/fix.md", h + "/.claude/skills/linked/SKILL.md",
	}
}

// digest summarises every file (path, mode, content) under dirs.
func digest(t *testing.T, dirs ...string) string {
	t.Helper()
	var lines []string
	for _, d := range dirs {
		_ = filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return nil
			}
			fi, _ := e.Info()
			data, _ := os.ReadFile(p)
			lines = append(lines, fmt.Sprintf("%s %v %x", p, fi.Mode(), sha256.Sum256(data)))
			return nil
		})
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func planOps(d *engine.ImportData) []string {
	var out []string
	for _, it := range d.Plan {
		out = append(out, fmt.Sprintf("%s %s %s %s", it.Op, it.ModuleID, strings.Join(it.Targets, ","), it.Scope))
	}
	return out
}

func TestImportDryRunThenApply(t *testing.T) {
	env := testEnv(t)
	imported := importFixture(t, env)
	repo := writeRepo(t, map[string]string{"agentpack.yaml": importManifest})
	e := engine.New(env, targets.NewSet())
	req := engine.Request{Repo: repo}

	before := digest(t, repo, env.Home, env.Cwd)
	d, warnings, err := e.Import(context.Background(), req, engine.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after := digest(t, repo, env.Home, env.Cwd); after != before {
		t.Fatal("the dry run wrote files")
	}
	want := []string{
		"skip_invalid agent:bad claude_code project",
		"create agent:helper claude_code project",
		"create command:fix-claude_code claude_code user",
		"create command:fix-cursor cursor project",
		"skip_managed command:managed claude_code user",
		"create instructions:project codex project",
		"create instructions:style cursor project",
		"create instructions:user claude_code user",
		"create prompt:ask codex,vscode both",
		"create skill:linked claude_code user",
		"create skill:review claude_code,codex user",
	}
	if got := planOps(d); !slices.Equal(got, want) {
		t.Fatalf("plan:\n got %q\nwant %q", got, want)
	}
	if d.Applied || d.Reason != "dry_run" || d.Summary.Create != 9 || d.Summary.Candidates != 13 || len(d.Conflicts) != 0 {
		t.Fatalf("summary: %+v applied %v reason %q conflicts %+v", d.Summary, d.Applied, d.Reason, d.Conflicts)
	}
	for _, w := range []string{"followed the symlinked skill folder", "skipping " + env.Cwd + "/.claude/agents/bad.md", "instructions_style--"} {
		if !slices.ContainsFunc(warnings, func(s string) bool { return strings.Contains(s, w) }) {
			t.Errorf("no warning containing %q in %q", w, warnings)
		}
	}

	d, _, err = e.Import(context.Background(), req, engine.ImportOptions{Apply: true})
	if err != nil {
		t.Fatal(err)
	}
	if !d.Applied || d.Summary.Create != 9 {
		t.Fatalf("apply: %+v", d)
	}
	text := mustRead(t, filepath.Join(repo, "agentpack.yaml"))
	for _, w := range []string{"# desired state", "# keep this comment", "imported: {include_tags: [imported]}", "id: command:fix-claude_code",
		"path: modules/commands/fix-claude_code/fix.md", "path: modules/prompts/ask.md", "targets: [claude_code, codex]"} {
		if !strings.Contains(text, w) {
			t.Fatalf("agentpack.yaml lacks %q:\n%s", w, text)
		}
	}
	if fi, err := os.Stat(filepath.Join(repo, "modules/skills/review/run.sh")); err != nil || fi.Mode().Perm() != 0o755 {
		t.Fatalf("run.sh copied without its mode: %v %v", fi, err)
	}
	if got := mustRead(t, filepath.Join(repo, "modules/instructions/style/AGENTS.md")); !strings.Contains(got, "alwaysApply: true") {
		t.Fatalf("cursor rule copied as %q", got)
	}

	// The imported modules plan without touching the files they came from:
	// the only changes are copies for the other scope (a user skill also
	// goes to the project, ...) and the cursor rule under agentpack's name.
	// The linked skill folder stays the user's: planning refuses to read or
	// write through it until it is a real folder again.
	link := filepath.Join(env.Home, ".claude/skills/linked")
	if _, _, err := e.Plan(context.Background(), engine.Request{Repo: repo, Profile: engine.ImportProfile}); apperr.CodeOf(err) != apperr.IOInvalidPath || !strings.Contains(err.Error(), link) {
		t.Fatalf("plan through the linked skill folder: %v, want E_IO_INVALID_PATH naming %s", err, link)
	}
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(link, os.DirFS(filepath.Join(env.Home, "elsewhere/linked"))); err != nil {
		t.Fatal(err)
	}
	st, p, err := e.Plan(context.Background(), engine.Request{Repo: repo, Profile: engine.ImportProfile})
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range imported {
		f := st.Desired.File(fsys.AbsPath(filepath.FromSlash(path)))
		if f == nil || f.SHA256 != checksum.SHA256Hex([]byte(mustRead(t, path))) {
			t.Errorf("%s: not desired with its current bytes (%+v)", path, f)
		}
	}
	for _, c := range p.Changes {
		if c.Path.String() == filepath.Join(env.Home, ".claude/commands/managed.md") {
			continue // the fixture's fake manifest claims it; no module makes it
		}
		if c.Op != plan.OpCreate || slices.Contains(imported, c.Path.ToSlash()) {
			t.Errorf("plan touches an imported file or is not a create: %s %s (%s)", c.Op, c.Path, c.Reason)
		}
	}
	if p.Summary.Create == 0 {
		t.Fatal("expected the other-scope copies to be planned")
	}

	// Importing again finds nothing new.
	d, _, err = e.Import(context.Background(), req, engine.ImportOptions{Apply: true})
	if err != nil || d.Applied || d.Reason != "no_changes" || d.Summary.SkippedExistingModule != 9 {
		t.Fatalf("second import: %+v %v", d, err)
	}
}

func TestImportConflictWritesNothing(t *testing.T) {
	env := testEnv(t)
	importFixture(t, env)
	repo := writeRepo(t, map[string]string{
		"agentpack.yaml":                importManifest,
		"modules/skills/review/mine.md": "my own module\n",
		"modules/prompts/ask.md":        "mine\n",
	})
	e := engine.New(env, targets.NewSet())
	before := digest(t, repo)
	d, _, err := e.Import(context.Background(), engine.Request{Repo: repo}, engine.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Conflicts) != 1 || d.Conflicts[0].Kind != "dest_path_exists" || d.Conflicts[0].Count != 2 {
		t.Fatalf("dry-run conflicts: %+v", d.Conflicts)
	}
	_, _, err = e.Import(context.Background(), engine.Request{Repo: repo}, engine.ImportOptions{Apply: true})
	srcWantCode(t, err, apperr.ImportConflict)
	paths, _ := apperr.As(err).Details["paths"].([]string)
	if !slices.Equal(paths, []string{filepath.Join(repo, "modules/prompts/ask.md"), filepath.Join(repo, "modules/skills/review")}) {
		t.Fatalf("conflict paths %q", paths)
	}
	if digest(t, repo) != before {
		t.Fatal("a refused import wrote files")
	}
}

func TestImportDuplicateIDsSameTarget(t *testing.T) {
	env := testEnv(t)
	mustWrite(t, filepath.Join(env.Home, ".claude/commands/fix.md"), "---\ndescription: user\n---\n")
	mustWrite(t, filepath.Join(env.Cwd, ".claude/commands/fix.md"), "---\ndescription: project\n---\n")
	mustWrite(t, filepath.Join(env.Home, ".claude/agents/same.md"), "---\nname: same\ndescription: d\n---\n")
	mustWrite(t, filepath.Join(env.Cwd, ".claude/agents/same.md"), "---\nname: same\ndescription: d\n---\n")
	repo := writeRepo(t, map[string]string{"agentpack.yaml": importManifest})
	d, _, err := engine.New(env, targets.NewSet()).Import(context.Background(), engine.Request{Repo: repo, Target: "claude_code"}, engine.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"create agent:same claude_code both",
		"create command:fix claude_code user",
		"skip_duplicate command:fix claude_code project",
	}
	if got := planOps(d); !slices.Equal(got, want) {
		t.Fatalf("plan:\n got %q\nwant %q", got, want)
	}
	if len(d.Conflicts) != 1 || d.Conflicts[0].Kind != "duplicate_module_id_in_scan" || d.Conflicts[0].ModuleID != "command:fix" {
		t.Fatalf("conflicts %+v", d.Conflicts)
	}
}
