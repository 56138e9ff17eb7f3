package mcpserver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/internal/envelope"
	"github.com/agentpack/agentpack/targets"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type M = map[string]any

// TestReadTools calls every read tool on the quickstart fixture and checks
// the envelope names the CLI command, as `--json` would.
func TestReadTools(t *testing.T) {
	te := newTestEnv(t)
	cs := connect(t, te.server(t), "2025-11-25")
	for _, tc := range []struct {
		tool      string
		args      M
		command   string
		commandID string
		dataKey   string
	}{
		{"plan", nil, "plan", "plan", "changes"},
		{"plan", M{"profile": "work", "target": "codex", "machine": "m1", "dry_run": true}, "plan", "plan", "changes"},
		{"diff", M{}, "diff", "diff", "changes"},
		{"preview", M{"diff": true}, "preview", "preview", "diff"},
		{"status", M{"only": []string{"missing", "pending"}}, "status", "status", "drift"},
		{"doctor", M{"target": "all"}, "doctor", "doctor", "checks"},
		{"explain", M{"kind": "plan"}, "explain", "explain plan", "items"},
		{"explain", M{"kind": "status"}, "explain", "explain status", "items"},
		{"deploy", M{}, "deploy", "deploy", "confirm_token"},
		{"snapshots", M{}, "snapshots", "snapshots list", "snapshots"},
		{"resources", M{"action": "list"}, "resources", "resources list", "resources"},
	} {
		t.Run(tc.tool+"/"+tc.commandID, func(t *testing.T) {
			env := callTool(t, cs, tc.tool, tc.args)
			if !env.OK {
				t.Fatalf("%s failed: %s", tc.tool, env.raw)
			}
			if env.Command != tc.command || env.CommandID != tc.commandID || env.Version != envelope.Version {
				t.Errorf("command=%q command_id=%q version=%q", env.Command, env.CommandID, env.Version)
			}
			if _, ok := env.Data[tc.dataKey]; !ok {
				t.Errorf("data has no %q: %s", tc.dataKey, env.raw)
			}
		})
	}
	// Nothing was written by any of them.
	if exists(filepath.Join(te.Project, "AGENTS.md")) || exists(filepath.Join(te.APHome, "state", "snapshots")) {
		t.Error("a read tool wrote files")
	}
}

// TestPlanMatchesEngine checks the plan tool returns exactly the envelope
// the CLI builds for `plan --json` (same engine call, same envelope).
func TestPlanMatchesEngine(t *testing.T) {
	te := newTestEnv(t)
	cs := connect(t, te.server(t), "2025-11-25")
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "plan", Arguments: M{}})
	if err != nil {
		t.Fatal(err)
	}
	st, p, err := engine.New(te.Env, targets.NewSet()).Plan(context.Background(), engine.Request{Repo: te.Repo})
	if err != nil {
		t.Fatal(err)
	}
	want := envelope.New("plan", "plan").Succeed(p, st.Warnings).JSON()
	if got := res.Content[0].(*mcp.TextContent).Text; got != string(want) {
		t.Errorf("plan text differs from the CLI envelope:\n%s\nwant\n%s", got, want)
	}
}

func TestToolErrors(t *testing.T) {
	te := newTestEnv(t)
	cs := connect(t, te.server(t, allowWrite), "2025-11-25")
	missing := filepath.Join(te.Home, "no-such-repo")
	for _, tc := range []struct {
		name, tool string
		args       M
		code       string
		property   string
	}{
		{"bad enum", "plan", M{"target": "emacs"}, "E_INVALID_ARGUMENT", "target"},
		{"unknown argument", "plan", M{"verbose": true}, "E_INVALID_ARGUMENT", "verbose"},
		{"mistyped argument", "status", M{"only": "missing"}, "E_INVALID_ARGUMENT", "only"},
		{"bad array item", "status", M{"only": []string{"gone"}}, "E_INVALID_ARGUMENT", "only"},
		{"missing required", "explain", M{}, "E_INVALID_ARGUMENT", "kind"},
		{"missing repo", "plan", M{"repo": missing}, "E_CONFIG_MISSING", ""},
		{"unknown profile", "plan", M{"profile": "nope"}, "E_INVALID_ARGUMENT", ""},
		{"write without yes", "deploy_apply", M{}, "E_CONFIRM_REQUIRED", ""},
		{"write with yes false", "rollback", M{"last": true, "yes": false}, "E_CONFIRM_REQUIRED", ""},
		{"write with yes string", "rollback", M{"last": true, "yes": "true"}, "E_CONFIRM_REQUIRED", ""},
		{"bad arg beats missing yes", "deploy_apply", M{"target": 3}, "E_INVALID_ARGUMENT", "target"},
		{"no token", "deploy_apply", M{"yes": true}, "E_CONFIRM_TOKEN_REQUIRED", ""},
		{"unknown token", "deploy_apply", M{"yes": true, "confirm_token": "00"}, "E_CONFIRM_TOKEN_MISMATCH", ""},
		{"rollback neither", "rollback", M{"yes": true}, "E_INVALID_ARGUMENT", ""},
		{"rollback unknown snapshot", "rollback", M{"yes": true, "to": "nope"}, "E_SNAPSHOT_NOT_FOUND", ""},
		{"snapshot unknown", "snapshots", M{"id": "nope"}, "E_SNAPSHOT_NOT_FOUND", ""},
		{"resources read without uri", "resources", M{"action": "read"}, "E_INVALID_ARGUMENT", "uri"},
		{"resources bad action", "resources", M{"action": "write"}, "E_INVALID_ARGUMENT", "action"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := callTool(t, cs, tc.tool, tc.args)
			if env.OK || env.code() != tc.code {
				t.Fatalf("got ok=%v code=%s, want %s: %s", env.OK, env.code(), tc.code, env.raw)
			}
			d := env.Errors[0].Details
			if d["reason_code"] == nil || d["next_actions"] == nil {
				t.Errorf("details lack reason_code/next_actions: %v", d)
			}
			if tc.property != "" && d["property"] != tc.property {
				t.Errorf("details.property = %v, want %s", d["property"], tc.property)
			}
		})
	}
	if exists(filepath.Join(te.APHome, "state", "snapshots")) || exists(filepath.Join(te.Project, "AGENTS.md")) {
		t.Error("a refused call wrote files")
	}
	// The server keeps serving after all of that.
	if env := callTool(t, cs, "plan", nil); !env.OK {
		t.Fatalf("plan after errors: %s", env.raw)
	}
}

func TestUnknownToolIsProtocolError(t *testing.T) {
	te := newTestEnv(t)
	cs := connect(t, te.server(t), "2025-11-25")
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "format_disk", Arguments: M{}})
	if err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Fatalf("want an unknown-tool JSON-RPC error, got %v", err)
	}
	if env := callTool(t, cs, "plan", nil); !env.OK {
		t.Fatal("server stopped serving")
	}
}

// TestWriteDisabled checks read-only mode refuses write tools with an
// E_WRITE_DISABLED envelope (not a JSON-RPC error) before validating.
func TestWriteDisabled(t *testing.T) {
	te := newTestEnv(t)
	cs := connect(t, te.server(t), "2025-11-25")
	for _, tc := range []struct {
		tool, command, commandID string
		args                     M
	}{
		{"deploy_apply", "deploy", "deploy --apply", M{"yes": true, "confirm_token": "x"}},
		{"deploy_apply", "deploy", "deploy --apply", M{"bogus": 1}},
		{"rollback", "rollback", "rollback", M{"last": true, "yes": true}},
	} {
		env := callTool(t, cs, tc.tool, tc.args)
		if env.OK || env.code() != "E_WRITE_DISABLED" || env.Command != tc.command || env.CommandID != tc.commandID {
			t.Errorf("%s: got %s", tc.tool, env.raw)
		}
	}
}

// TestDeployApplyRollbackFlow is the whole write path: deploy issues a
// token, deploy_apply writes real files and a snapshot, rollback removes
// them again.
func TestDeployApplyRollbackFlow(t *testing.T) {
	te := newTestEnv(t)
	cs := connect(t, te.server(t, allowWrite), "2025-11-25")
	projAgents := filepath.Join(te.Project, "AGENTS.md")
	codexAgents := filepath.Join(te.CodexHome, "AGENTS.md")
	skill := filepath.Join(te.Home, ".claude", "skills", "release-notes", "SKILL.md")

	dep := callTool(t, cs, "deploy", M{})
	tok, _ := dep.Data["confirm_token"].(string)
	hash, _ := dep.Data["confirm_plan_hash"].(string)
	exp, _ := dep.Data["confirm_token_expires_at"].(string)
	if len(tok) != 32 || len(hash) != 64 || dep.Data["applied"] != false {
		t.Fatalf("deploy data: %s", dep.raw)
	}
	if at, err := time.Parse(time.RFC3339, exp); err != nil || time.Until(at) > ConfirmTokenLifetime+time.Minute {
		t.Fatalf("confirm_token_expires_at %q: %v", exp, err)
	}
	if exists(projAgents) {
		t.Fatal("deploy (dry run) wrote files")
	}
	// A token is bound to its request.
	if env := callTool(t, cs, "deploy_apply", M{"yes": true, "confirm_token": tok, "profile": "work"}); env.code() != "E_CONFIRM_TOKEN_MISMATCH" {
		t.Fatalf("other profile: %s", env.raw)
	}
	// dry_run previews without using the token.
	if env := callTool(t, cs, "deploy_apply", M{"yes": true, "dry_run": true}); !env.OK || env.CommandID != "deploy" || env.Data["applied"] != false {
		t.Fatalf("dry run: %s", env.raw)
	}
	app := callTool(t, cs, "deploy_apply", M{"yes": true, "confirm_token": tok})
	if !app.OK || app.Command != "deploy" || app.CommandID != "deploy --apply" || app.Data["applied"] != true {
		t.Fatalf("deploy_apply: %s", app.raw)
	}
	snap, _ := app.Data["snapshot_id"].(string)
	for _, p := range []string{projAgents, codexAgents, skill} {
		if !exists(p) {
			t.Errorf("deploy_apply did not write %s", p)
		}
	}
	// The token was consumed.
	if env := callTool(t, cs, "deploy_apply", M{"yes": true, "confirm_token": tok}); env.code() != "E_CONFIRM_TOKEN_MISMATCH" {
		t.Fatalf("reused token: %s", env.raw)
	}
	list := callTool(t, cs, "snapshots", M{})
	if snaps := list.Data["snapshots"].([]any); len(snaps) != 1 || snaps[0].(map[string]any)["id"] != snap {
		t.Fatalf("snapshots: %s", list.raw)
	}
	if show := callTool(t, cs, "snapshots", M{"id": snap}); !show.OK || show.CommandID != "snapshots show" {
		t.Fatalf("snapshots show: %s", show.raw)
	}
	if st := callTool(t, cs, "status", M{}); st.Data["summary"].(map[string]any)["missing"] != float64(0) {
		t.Fatalf("status after apply: %s", st.raw)
	}
	rb := callTool(t, cs, "rollback", M{"last": true, "yes": true})
	if !rb.OK || rb.Command != "rollback" || rb.Data["removed"].(float64) == 0 {
		t.Fatalf("rollback: %s", rb.raw)
	}
	for _, p := range []string{projAgents, codexAgents, skill} {
		if exists(p) {
			t.Errorf("rollback left %s", p)
		}
	}
}

func TestConfirmTokenExpiresAndPlanChange(t *testing.T) {
	te := newTestEnv(t)
	clock := &fixedClock{now: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	cs := connect(t, te.server(t, allowWrite, func(o *Options) { o.Now = clock.Now }), "2025-11-25")

	tok := callTool(t, cs, "deploy", M{}).Data["confirm_token"]
	if exp := callTool(t, cs, "deploy", M{}).Data["confirm_token_expires_at"]; exp != "2030-01-01T00:10:00Z" {
		t.Fatalf("expires_at = %v", exp)
	}
	clock.Add(ConfirmTokenLifetime)
	if env := callTool(t, cs, "deploy_apply", M{"yes": true, "confirm_token": tok}); env.code() != "E_CONFIRM_TOKEN_EXPIRED" {
		t.Fatalf("expired token: %s", env.raw)
	}

	// The plan changes between deploy and deploy_apply: the token no longer
	// matches, and nothing is written.
	tok = callTool(t, cs, "deploy", M{}).Data["confirm_token"]
	body := filepath.Join(te.Repo, "modules", "instructions", "base", "AGENTS.md")
	if err := os.WriteFile(body, []byte("# changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := callTool(t, cs, "deploy_apply", M{"yes": true, "confirm_token": tok})
	if env.code() != "E_CONFIRM_TOKEN_MISMATCH" || env.Errors[0].Details["current_plan_hash"] == nil {
		t.Fatalf("changed plan: %s", env.raw)
	}
	if exists(filepath.Join(te.Project, "AGENTS.md")) {
		t.Fatal("a mismatched token wrote files")
	}
}

// TestDeployApplyRefusalKeepsToken: an apply the engine refuses (an
// unmanaged file in the way) keeps the token, so a retry with adopt works.
func TestDeployApplyRefusalKeepsToken(t *testing.T) {
	te := newTestEnv(t)
	cs := connect(t, te.server(t, allowWrite), "2025-11-25")
	theirs := filepath.Join(te.Project, "AGENTS.md")
	if err := os.WriteFile(theirs, []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tok := callTool(t, cs, "deploy", M{}).Data["confirm_token"]
	env := callTool(t, cs, "deploy_apply", M{"yes": true, "confirm_token": tok})
	if env.code() != "E_ADOPT_CONFIRM_REQUIRED" {
		t.Fatalf("want E_ADOPT_CONFIRM_REQUIRED: %s", env.raw)
	}
	if env := callTool(t, cs, "deploy_apply", M{"yes": true, "confirm_token": tok, "adopt": true}); !env.OK {
		t.Fatalf("retry with adopt: %s", env.raw)
	}
	if b, _ := os.ReadFile(theirs); string(b) == "mine\n" {
		t.Fatal("adopt did not overwrite")
	}
}

// TestConcurrentCalls: calls arrive concurrently from several sessions;
// reads see consistent state and the two applies serialise on the lock:
// exactly one writes, the other finds its plan stale or nothing to do.
func TestConcurrentCalls(t *testing.T) {
	te := newTestEnv(t)
	s := te.server(t, allowWrite)
	a, b := connect(t, s, "2025-11-25"), connect(t, s, "2025-11-25")
	tokA := callTool(t, a, "deploy", M{}).Data["confirm_token"]
	tokB := callTool(t, b, "deploy", M{}).Data["confirm_token"]
	type out struct {
		env *decodedEnvelope
		err error
	}
	results := make(chan out, 10)
	call := func(cs *mcp.ClientSession, name string, args M) {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			results <- out{err: err}
			return
		}
		results <- out{env: checkResult(t, name, res)}
	}
	go call(a, "deploy_apply", M{"yes": true, "confirm_token": tokA})
	go call(b, "deploy_apply", M{"yes": true, "confirm_token": tokB})
	for i := range 8 {
		go call([]*mcp.ClientSession{a, b}[i%2], "status", M{})
	}
	applied := 0
	for range 10 {
		r := <-results
		if r.err != nil {
			t.Fatal(r.err)
		}
		e := r.env
		switch {
		case e.Command == "status" && !e.OK:
			t.Errorf("status failed: %s", e.raw)
		case e.CommandID == "deploy --apply" && e.OK && e.Data["applied"] == true:
			applied++
		case e.CommandID == "deploy --apply" && e.OK && e.Data["reason"] == "no_changes":
		case e.CommandID == "deploy --apply" && e.code() == "E_CONFIRM_TOKEN_MISMATCH":
		case e.CommandID == "deploy --apply":
			t.Errorf("unexpected apply result: %s", e.raw)
		}
	}
	if applied != 1 {
		t.Fatalf("%d applies wrote, want exactly 1", applied)
	}
	if !exists(filepath.Join(te.Project, "AGENTS.md")) {
		t.Fatal("nothing was written")
	}
	if list := callTool(t, a, "snapshots", M{}); len(list.Data["snapshots"].([]any)) != 1 {
		t.Fatalf("snapshots: %s", list.raw)
	}
}
