package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/internal/checksum"
	"github.com/agentpack/agentpack/targets"
)

// TestReconcileTable walks one managed file through every combination of
// desired (the module's bytes), actual (the disk) and last applied (the
// target manifest) and checks the plan's op, update kind and reason and the
// status kind. The file is a skill's extra.txt; the skill's SKILL.md stays
// in sync throughout, so its root is always live.
func TestReconcileTable(t *testing.T) {
	const d, x, y = "desired\n", "other\n", "older\n"
	none := "" // absent
	cases := []struct {
		name                  string
		desired, actual, last string
		op, kind, reason      string // plan ("" op: no change)
		status                string // status kind ("" : in sync)
	}{
		{"new file", d, none, none, "create", "", "file missing", "pending"},
		{"deleted by hand", d, none, d, "create", "", "file missing", "missing"},
		{"right bytes, never recorded", d, d, none, "", "", "", "pending"},
		{"in sync", d, d, d, "", "", "", ""},
		{"unmanaged file in the way", d, x, none, "update", "adopt_update", "would overwrite unmanaged existing file", "pending"},
		{"module changed", d, x, x, "update", "managed_update", "content differs", "pending"},
		{"edited by hand", d, x, y, "update", "drifted_update", "content differs", "modified"},
		{"no longer desired", none, x, x, "delete", "", "no longer managed", "pending"},
		{"no longer desired, edited", none, x, y, "delete", "", "edited since last deploy", "modified"},
		{"no longer desired, already gone", none, none, x, "", "", "", "missing"},
		{"unmanaged and not desired", none, x, none, "", "", "", "extra"},
	}
	seenOps, seenKinds := map[string]bool{}, map[string]bool{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := testEnv(t)
			repo := codexRepo(t)
			extraSrc := filepath.Join(repo, "modules/s/extra.txt")
			if tc.desired == none {
				if err := os.Remove(extraSrc); err != nil {
					t.Fatal(err)
				}
			} else {
				mustWrite(t, extraSrc, tc.desired)
			}
			root := filepath.Join(env.Cwd, ".agents/skills")
			extra := filepath.Join(root, "s/extra.txt")
			skill := mustRead(t, filepath.Join(repo, "modules/s/SKILL.md"))
			mustWrite(t, filepath.Join(root, "s/SKILL.md"), skill)
			if tc.actual != none {
				mustWrite(t, extra, tc.actual)
			}
			files := []map[string]any{{"path": "s/SKILL.md", "sha256": checksum.SHA256Hex([]byte(skill)), "module_ids": []string{"skill:s"}}}
			if tc.last != none {
				files = append(files, map[string]any{"path": "s/extra.txt", "sha256": checksum.SHA256Hex([]byte(tc.last)), "module_ids": []string{"skill:s"}})
			}
			m, _ := json.Marshal(map[string]any{"schema_version": 1, "generated_at": "2026-01-01T00:00:00Z", "tool": "codex", "managed_files": files})
			mustWrite(t, filepath.Join(root, ".agentpack.manifest.codex.json"), string(m))

			e := engine.New(env, targets.NewSet())
			req := engine.Request{Repo: repo, Target: "codex"}
			_, p, err := e.Plan(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			var gotOp, gotKind, gotReason string
			for _, c := range p.Changes {
				if c.Path.String() == extra {
					gotOp, gotKind, gotReason = string(c.Op), string(c.UpdateKind), c.Reason
				} else if c.Path.String() != filepath.Join(env.Cwd, "AGENTS.md") {
					t.Errorf("unexpected change %s %s", c.Op, c.Path)
				}
			}
			if gotOp != tc.op || gotKind != tc.kind || gotReason != tc.reason {
				t.Errorf("plan: got (%q, %q, %q), want (%q, %q, %q)", gotOp, gotKind, gotReason, tc.op, tc.kind, tc.reason)
			}
			_, s, err := e.Status(context.Background(), req, nil)
			if err != nil {
				t.Fatal(err)
			}
			gotStatus := ""
			for _, dr := range s.Drift {
				if dr.Path.String() == extra {
					gotStatus = dr.Kind
				}
			}
			if gotStatus != tc.status {
				t.Errorf("status: got %q, want %q (drift %s)", gotStatus, tc.status, fmt.Sprint(s.Drift))
			}
			seenOps[tc.op], seenKinds[tc.status] = true, true
			if tc.kind != "" {
				seenOps[tc.kind] = true
			}
		})
	}
	// The table must cover every outcome.
	for _, want := range []string{"create", "update", "delete", "adopt_update", "managed_update", "drifted_update"} {
		if !seenOps[want] {
			t.Errorf("no case plans %s", want)
		}
	}
	for _, want := range []string{"modified", "missing", "extra", "pending"} {
		if !slices.Contains(engine.DriftKinds, want) || !seenKinds[want] {
			t.Errorf("no case reports status %s", want)
		}
	}
}
