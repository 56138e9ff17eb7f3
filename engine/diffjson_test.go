package engine_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/engine/plan"
	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/agentpack/agentpack/internal/jsonstream"
	"github.com/agentpack/agentpack/internal/textdiff"
)

// TestDiffChangeJSONMatchesEncodingJSON: the changes of a diff, written by
// DiffChange.AppendJSON in a streamed envelope, are byte for byte what
// encoding/json makes of them: created, updated and deleted files, binary
// ones with no diff, key-level entries, paths that need escaping.
func TestDiffChangeJSONMatchesEncodingJSON(t *testing.T) {
	d := &engine.DiffData{Profile: "default", Targets: []string{"codex"}}
	sha := strings.Repeat("ab", 32)
	for i := range 80 {
		path := fmt.Sprintf("/p/d%d/f&<>\"\\\u2028%d.md", i%5, i)
		c := plan.Change{Target: "codex", Path: fsys.AbsPath(path), PathPosix: path, Reason: "new", ModuleIDs: []string{"skill:s"}}
		before, after := []byte(fmt.Sprintf("old \"%d\"\n\tline\n", i)), []byte(fmt.Sprintf("new <%d>\nline\u2029\n", i))
		switch i % 5 {
		case 0:
			c.Op, before = plan.OpCreate, nil
		case 1:
			c.Op, after = plan.OpDelete, nil
		case 2:
			c.Op = plan.OpUpdate
		case 3:
			c.Op, after = plan.OpUpdate, []byte{0, 1}
		case 4:
			c.Op, c.Entries = plan.OpUpdate, []plan.EntryChange{{Name: "gh", Op: "update", Unified: "--- a\n+++ b\n"}}
		}
		c.BeforeSHA256, c.AfterSHA256 = &sha, &sha
		dc := engine.DiffChange{Change: c}
		if len(c.Entries) > 0 {
			dc.Unified = textdiff.Text(c.Entries[0].Unified)
		} else if u, ok := textdiff.UnifiedDiff(path, path, before, after); ok {
			dc.Unified = u
		}
		d.Changes = append(d.Changes, dc)
	}
	for _, opts := range []jsonstream.Options{{Indent: "  "}, {Indent: "\t", EscapeHTML: true}, {}, {EscapeHTML: true}} {
		var whole, streamed bytes.Buffer
		enc := json.NewEncoder(&whole)
		enc.SetEscapeHTML(opts.EscapeHTML)
		if opts.Indent != "" {
			enc.SetIndent("", opts.Indent)
		}
		if err := enc.Encode(d); err != nil {
			t.Fatal(err)
		}
		if err := jsonstream.Encode(&streamed, d, opts); err != nil {
			t.Fatal(err)
		}
		if got, want := streamed.String(), whole.String(); got != want {
			i := 0
			for i < min(len(got), len(want)) && got[i] == want[i] {
				i++
			}
			t.Fatalf("%+v: streamed diff JSON differs at %d:\n%.300s\nwant:\n%.300s", opts, i, got[max(0, i-100):], want[max(0, i-100):])
		}
		if !strings.Contains(whole.String(), `"unified": "--- /p/d0/f`) && opts.Indent != "" {
			t.Fatalf("no diffs in %s", whole.Bytes())
		}
	}
}
