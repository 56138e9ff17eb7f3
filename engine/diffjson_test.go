package engine_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/engine/plan"
	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/agentpack/agentpack/internal/jsonstream"
	"github.com/agentpack/agentpack/internal/textdiff"
	"github.com/agentpack/agentpack/targets"
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
		dc := engine.DiffChange{Change: &c}
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

// TestDiffOmitsBinaryAndLargeFilesInOrder: a diff leaves out the diff of
// a binary file and of one whose diff is over 100 KiB, with one warning
// each in the order of the changes (the diffs are made on every CPU), and
// shows the others; more than a chunk of files, so several goroutines
// share them.
func TestDiffOmitsBinaryAndLargeFilesInOrder(t *testing.T) {
	files := map[string]string{"agentpack.yaml": codexOnlyManifest, "modules/base/AGENTS.md": "# base\n",
		"modules/s/SKILL.md": "---\nname: s\ndescription: d\n---\nbody\n"}
	for i := range 600 {
		files[fmt.Sprintf("modules/s/ref/f%03d.md", i)] = fmt.Sprintf("line %d\n", i)
	}
	files["modules/s/ref/f100.md"] = "bin\x00ary"
	files["modules/s/ref/f500.md"] = strings.Repeat("a long line of text\n", 6000)
	env := testEnv(t)
	st, d, err := engine.New(env, targets.NewSet()).Diff(t.Context(), engine.Request{Repo: writeRepo(t, files)})
	if err != nil {
		t.Fatal(err)
	}
	var omitted []string
	for _, w := range st.Warnings {
		if strings.Contains(w, "omitted") {
			omitted = append(omitted, w)
		}
	}
	if len(omitted) != 2 || !strings.Contains(omitted[0], "f100.md omitted (binary") || !strings.Contains(omitted[1], "f500.md omitted (binary or over 100 KiB)") {
		t.Fatalf("warnings %q", st.Warnings)
	}
	shown := 0
	for _, c := range d.Changes {
		if name := filepath.Base(c.Path.String()); name == "f100.md" || name == "f500.md" {
			if !c.Unified.IsZero() {
				t.Errorf("%s has a diff", name)
			}
		} else if strings.HasSuffix(name, ".md") && strings.Contains(c.Unified.String(), "+line ") {
			shown++
		}
	}
	if shown != 598 {
		t.Errorf("%d diffs shown, want 598", shown)
	}
}
