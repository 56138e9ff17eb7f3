package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/engine/plan"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/targets"
)

const mcpManifest = `version: 1
profiles:
  default: {include_tags: [base]}
targets:
  claude_code: {scope: user}
modules:
  - id: mcp:gh
    type: mcp
    tags: [base]
    source: {local_path: {path: modules/mcp/gh.yaml}}
`

const ghServer = "name: gh\ntransport: stdio\ncommand: npx\nargs: [-y, gh-mcp]\nenv: {GITHUB_TOKEN: \"${GITHUB_TOKEN}\"}\n"

// A ~/.claude.json shaped like a real one: much more than mcpServers.
const userClaudeJSON = `{
  "numStartups": 12,
  "projects": {
    "/work/p": {"allowedTools": [], "history": [{"display": "fix it"}]}
  },
  "mcpServers": {
    "theirs": {"command": "their-server"}
  },
  "oauthAccount": {"emailAddress": "me@example.com"}
}
`

type mcpWorld struct {
	t      *testing.T
	env    engine.Env
	e      *engine.Engine
	req    engine.Request
	repo   string
	claude string
}

func newMCPWorld(t *testing.T, existing string) *mcpWorld {
	env := testEnv(t)
	repo := writeRepo(t, map[string]string{"agentpack.yaml": mcpManifest, "modules/mcp/gh.yaml": ghServer})
	w := &mcpWorld{t: t, env: env, e: engine.New(env, targets.NewSet()), req: engine.Request{Repo: repo}, repo: repo,
		claude: filepath.Join(env.Home, ".claude.json")}
	if existing != "" {
		mustWrite(t, w.claude, existing)
	}
	return w
}

// change returns the plan's change of ~/.claude.json (nil when none).
func (w *mcpWorld) change() *plan.Change {
	w.t.Helper()
	_, p, err := w.e.Plan(context.Background(), w.req)
	if err != nil {
		w.t.Fatal(err)
	}
	for i := range p.Changes {
		if p.Changes[i].Path.String() == w.claude {
			return &p.Changes[i]
		}
	}
	return nil
}

func (w *mcpWorld) deploy(opt engine.ApplyOptions) error {
	_, _, err := w.e.Deploy(context.Background(), w.req, true, opt)
	return err
}

func (w *mcpWorld) status() []engine.DriftItem {
	w.t.Helper()
	_, s, err := w.e.Status(context.Background(), w.req, nil)
	if err != nil {
		w.t.Fatal(err)
	}
	var out []engine.DriftItem
	for _, d := range s.Drift {
		if d.Path.String() == w.claude {
			out = append(out, d)
		}
	}
	return out
}

// TestMCPEntryTable walks one MCP server entry through the per-entry
// states: create, in sync, adopt, drift, user edits elsewhere, delete.
func TestMCPEntryTable(t *testing.T) {
	ours := `"gh": {`
	cases := []struct {
		name     string
		existing string
		setup    func(w *mcpWorld) // after a first deploy when deployFirst
		first    bool
		op       string // entry op ("" no change)
		kind     string
		refusal  apperr.Code
		status   string // drift kind of the file ("" in sync)
	}{
		{name: "new entry in a file with other keys needs no --adopt", existing: userClaudeJSON, op: "create", status: "pending"},
		{name: "new file", op: "create", status: "pending"},
		{name: "foreign entry of the same name", existing: strings.Replace(userClaudeJSON, `"theirs"`, `"gh": {"command": "mine"}, "theirs"`, 1),
			op: "update", kind: "adopt_update", refusal: apperr.AdoptConfirmRequired, status: "pending"},
		{name: "foreign entry already right", existing: strings.Replace(userClaudeJSON, `"theirs"`, `"gh": {"args": ["-y", "gh-mcp"], "command": "npx", "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}}, "theirs"`, 1),
			status: "pending"},
		{name: "in sync", existing: userClaudeJSON, first: true},
		{name: "user edits other keys: no drift", existing: userClaudeJSON, first: true, setup: func(w *mcpWorld) {
			b := mustRead(w.t, w.claude)
			mustWrite(w.t, w.claude, strings.Replace(strings.Replace(b, `"numStartups": 12`, `"numStartups": 13`, 1), `"theirs": {"command": "their-server"}`, `"theirs": {"command": "v2"}, "new": {"url": "x"}`, 1))
		}},
		{name: "owned entry edited by hand is drift", existing: userClaudeJSON, first: true, setup: func(w *mcpWorld) {
			mustWrite(w.t, w.claude, strings.Replace(mustRead(w.t, w.claude), `"command": "npx"`, `"command": "hacked"`, 1))
		}, op: "update", kind: "drifted_update", refusal: apperr.DriftConflict, status: "modified"},
		{name: "module changed", existing: userClaudeJSON, first: true, setup: func(w *mcpWorld) {
			mustWrite(w.t, filepath.Join(w.repo, "modules/mcp/gh.yaml"), strings.Replace(ghServer, "gh-mcp", "gh-mcp@2", 1))
		}, op: "update", kind: "managed_update", status: "pending"},
		{name: "module removed", existing: userClaudeJSON, first: true, setup: func(w *mcpWorld) {
			mustWrite(w.t, filepath.Join(w.repo, "agentpack.yaml"), strings.Replace(mcpManifest, "tags: [base]\n    source", "tags: [other]\n    source", 1))
		}, op: "delete", status: "pending"},
		{name: "module removed after a hand edit", existing: userClaudeJSON, first: true, setup: func(w *mcpWorld) {
			mustWrite(w.t, w.claude, strings.Replace(mustRead(w.t, w.claude), `"command": "npx"`, `"command": "hacked"`, 1))
			mustWrite(w.t, filepath.Join(w.repo, "agentpack.yaml"), strings.Replace(mcpManifest, "tags: [base]\n    source", "tags: [other]\n    source", 1))
			// The root ($HOME) is no longer produced, so status reports the
			// stale root's work as pending, as for whole files; the plan
			// still refuses to delete the hand-edited entry.
		}, op: "delete", refusal: apperr.DriftConflict, status: "pending"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newMCPWorld(t, tc.existing)
			if tc.first {
				if err := w.deploy(engine.ApplyOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			if tc.setup != nil {
				tc.setup(w)
			}
			c := w.change()
			gotOp, gotKind := "", ""
			if c != nil {
				if len(c.Entries) != 1 || c.Entries[0].Name != "gh" {
					t.Fatalf("want one entry change for gh, got %+v", c.Entries)
				}
				gotOp, gotKind = c.Entries[0].Op, c.Entries[0].UpdateKind
				if c.Entries[0].Unified == "" || !strings.Contains(c.Entries[0].Unified, "#gh") {
					t.Errorf("no entry-level diff: %q", c.Entries[0].Unified)
				}
			}
			if gotOp != tc.op || gotKind != tc.kind {
				t.Fatalf("entry op/kind = %q/%q, want %q/%q", gotOp, gotKind, tc.op, tc.kind)
			}
			var kinds []string
			for _, d := range w.status() {
				kinds = append(kinds, d.Kind)
			}
			if got := strings.Join(kinds, ","); got != tc.status {
				t.Errorf("status = %q, want %q", got, tc.status)
			}
			before, _ := os.ReadFile(w.claude)
			err := w.deploy(engine.ApplyOptions{})
			if apperr.CodeOf(err) != tc.refusal && !(tc.refusal == "" && err == nil) {
				t.Fatalf("deploy: %v, want %q", err, tc.refusal)
			}
			if tc.refusal != "" {
				if after, _ := os.ReadFile(w.claude); string(after) != string(before) {
					t.Fatal("a refused deploy changed the file")
				}
				if err := w.deploy(engine.ApplyOptions{Adopt: true, Force: true}); err != nil {
					t.Fatal(err)
				}
			}
			after := mustRead(t, w.claude)
			if tc.op == "delete" {
				if strings.Contains(after, ours) {
					t.Fatalf("entry still there:\n%s", after)
				}
			} else if !strings.Contains(after, ours) {
				t.Fatalf("entry missing:\n%s", after)
			}
			if w.change() != nil || len(w.status()) != 0 {
				t.Fatalf("not in sync after deploy: %+v %+v", w.change(), w.status())
			}
		})
	}
}

// TestMCPEntryKeepsBytesAndRollsBack: a deploy changes only the entry, and
// removing the module gives back the exact original bytes; rollback
// restores whole files.
func TestMCPEntryKeepsBytesAndRollsBack(t *testing.T) {
	w := newMCPWorld(t, userClaudeJSON)
	if err := os.Chmod(w.claude, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := w.deploy(engine.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	deployed := mustRead(t, w.claude)
	if !strings.HasPrefix(deployed, userClaudeJSON[:strings.Index(userClaudeJSON, `{"command": "their-server"}`)]) ||
		!strings.HasSuffix(deployed, "\n  },\n  \"oauthAccount\": {\"emailAddress\": \"me@example.com\"}\n}\n") {
		t.Fatalf("bytes outside the entry changed:\n%s", deployed)
	}
	if fi, _ := os.Stat(w.claude); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want the file's own 0600", fi.Mode().Perm())
	}
	mustWrite(t, filepath.Join(w.repo, "agentpack.yaml"), strings.Replace(mcpManifest, "tags: [base]\n    source", "tags: [other]\n    source", 1))
	if err := w.deploy(engine.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, w.claude); got != userClaudeJSON {
		t.Fatalf("removing the module did not give back the original:\n%s", got)
	}
	if _, _, err := w.e.Rollback(context.Background(), engine.RollbackOptions{Last: true}); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, w.claude); got != deployed {
		t.Fatalf("rollback is not byte-exact:\n%s", got)
	}
}

// TestMCPCreatedFileGoesWithItsLastEntry: a file agentpack created is
// removed with its last entry; one the user added to is kept.
func TestMCPCreatedFileGoesWithItsLastEntry(t *testing.T) {
	w := newMCPWorld(t, "")
	if err := w.deploy(engine.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(w.repo, "agentpack.yaml"), strings.Replace(mcpManifest, "tags: [base]\n    source", "tags: [other]\n    source", 1))
	if c := w.change(); c == nil || c.Op != plan.OpDelete {
		t.Fatalf("want the created file deleted, got %+v", c)
	}
	if err := w.deploy(engine.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(w.claude); !os.IsNotExist(err) {
		t.Fatalf("created file left behind: %v", err)
	}
}

// TestMCPInvalidConfigIsRefused: a file that does not parse is
// E_CONFIG_INVALID naming file and line, and stays untouched.
func TestMCPInvalidConfigIsRefused(t *testing.T) {
	bad := "{\n  \"numStartups\": 1,\n  oops\n}\n"
	w := newMCPWorld(t, bad)
	_, _, err := w.e.Plan(context.Background(), w.req)
	ae := apperr.As(err)
	if ae == nil || ae.Code != apperr.ConfigInvalid || ae.Details["line"] != 3 || !strings.Contains(ae.Message, w.claude) {
		t.Fatalf("want E_CONFIG_INVALID on line 3 of %s, got %v", w.claude, err)
	}
	if err := w.deploy(engine.ApplyOptions{Adopt: true, Force: true}); apperr.CodeOf(err) != apperr.ConfigInvalid {
		t.Fatalf("deploy: %v", err)
	}
	if got := mustRead(t, w.claude); got != bad {
		t.Fatal("an invalid file was touched")
	}
}

// TestMCPLiteralSecretRefused: a literal credential is E_MODULE_INVALID
// and never echoed.
func TestMCPLiteralSecretRefused(t *testing.T) {
	w := newMCPWorld(t, "")
	secret := "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
	mustWrite(t, filepath.Join(w.repo, "modules/mcp/gh.yaml"), strings.Replace(ghServer, "${GITHUB_TOKEN}", secret, 1))
	_, _, err := w.e.Plan(context.Background(), w.req)
	ae := apperr.As(err)
	if ae == nil || ae.Code != apperr.ModuleInvalid {
		t.Fatalf("want E_MODULE_INVALID, got %v", err)
	}
	if strings.Contains(ae.Message+ae.Hint, secret) || strings.Contains(ae.Message+ae.Hint, "abcdefgh") {
		t.Fatalf("the secret was echoed: %s / %s", ae.Message, ae.Hint)
	}
}

// TestMCPCodexTOMLJourney deploys a server into a commented config.toml
// holding the user's own servers and tool approvals, then removes it: the
// file comes back byte for byte, and the user's approvals under the owned
// table survive a module change.
func TestMCPCodexTOMLJourney(t *testing.T) {
	env := testEnv(t)
	env.CodexHome = filepath.Join(filepath.Dir(env.Home), "codex")
	config := "# my settings\nmodel = \"o3\" # favourite\n\n[mcp_servers.mine]\ncommand = \"mine\"\nargs = [\n  \"--x\", # why\n]\n\n[profiles.fast]\nmodel = \"mini\"\n"
	path := filepath.Join(env.CodexHome, "config.toml")
	mustWrite(t, path, config)
	manifest := strings.Replace(mcpManifest, "claude_code: {scope: user}", "codex: {scope: user}", 1)
	repo := writeRepo(t, map[string]string{"agentpack.yaml": manifest, "modules/mcp/gh.yaml": ghServer})
	e := engine.New(env, targets.NewSet())
	req := engine.Request{Repo: repo}
	if _, _, err := e.Deploy(context.Background(), req, true, engine.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	got := mustRead(t, path)
	want := strings.Replace(config, "]\n\n[profiles", "]\n\n[mcp_servers.gh]\ncommand = \"npx\"\nargs = [\"-y\", \"gh-mcp\"]\nenv_vars = [\"GITHUB_TOKEN\"]\n\n[profiles", 1)
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	// The user approves a tool of our server: a table of its own, not drift.
	approved := got + "\n[mcp_servers.gh.tools.search]\napproved = true\n"
	mustWrite(t, path, approved)
	_, s, err := e.Status(context.Background(), req, nil)
	if err != nil || s.Summary.Modified != 0 {
		t.Fatalf("approvals counted as drift: %+v %v", s, err)
	}
	mustWrite(t, filepath.Join(repo, "modules/mcp/gh.yaml"), strings.Replace(ghServer, "gh-mcp", "gh-mcp@2", 1))
	if _, _, err := e.Deploy(context.Background(), req, true, engine.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, path); got != strings.Replace(approved, "gh-mcp", "gh-mcp@2", 1) {
		t.Fatalf("module change touched more than the entry:\n%s", got)
	}
	mustWrite(t, filepath.Join(repo, "agentpack.yaml"), strings.Replace(manifest, "tags: [base]\n    source", "tags: [other]\n    source", 1))
	if _, _, err := e.Deploy(context.Background(), req, true, engine.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, path); got != config {
		t.Fatalf("removal did not give back the user's file:\n%q\nwant\n%q", got, config)
	}
}

// TestMCPFileRewrittenDuringApply: when the client rewrites its config
// between plan and write (Claude Code does on every start), the apply is
// refused and rolled back rather than dropping the client's change.
func TestMCPFileRewrittenDuringApply(t *testing.T) {
	w := newMCPWorld(t, userClaudeJSON)
	theirs := strings.Replace(userClaudeJSON, `"numStartups": 12`, `"numStartups": 13`, 1)
	w.e.Checkpoint = func(phase string) {
		if phase == "journal written" {
			mustWrite(t, w.claude, theirs)
		}
	}
	err := w.deploy(engine.ApplyOptions{})
	if apperr.CodeOf(err) != apperr.DriftConflict || !strings.Contains(apperr.As(err).Message, "changed while agentpack was writing it") {
		t.Fatalf("want E_DRIFT_CONFLICT (changed since plan), got %v", err)
	}
	if got := mustRead(t, w.claude); got != theirs {
		t.Fatalf("the client's change was lost:\n%s", got)
	}
	w.e.Checkpoint = nil
	if err := w.deploy(engine.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, w.claude); !strings.Contains(got, `"numStartups": 13`) || !strings.Contains(got, `"gh": {`) {
		t.Fatalf("retry did not edit the file as it is now:\n%s", got)
	}
}
