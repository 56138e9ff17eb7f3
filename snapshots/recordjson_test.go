package snapshots

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"
)

// TestFileChangeAppendJSONIsEncodingJSON: the JSON a record's or journal's
// file is written with is encoding/json's, byte for byte, for every op,
// deltas, the manifest flag and strings that need escaping, indented or
// compact, with and without HTML escaping.
func TestFileChangeAppendJSONIsEncodingJSON(t *testing.T) {
	odd := "/r/<a>&\"b\\\t\u2028é\xff\x01.md"
	changes := []FileChange{
		{Target: "codex", Root: "/r", Path: "/r/a", Op: OpCreate, After: content("3")},
		{Target: "codex", Root: "/r", Path: odd, Op: OpUpdate, Before: content("1"),
			After: &Content{SHA256: content("2").SHA256, Mode: 0o644, Size: 1 << 40, Delta: &DeltaRef{Base: content("1").SHA256, SHA256: content("4").SHA256}}},
		{Target: "claude_code", Root: "/c", Path: "/c/.agentpack.manifest.claude_code.json", Op: OpDelete, Before: content("4"), Manifest: true},
		{},
	}
	layouts := []struct{ prefix, indent string }{{"", ""}, {"", "  "}, {"    ", "  "}, {"\t", "\t"}}
	for _, c := range changes {
		for _, l := range layouts {
			for _, html := range []bool{false, true} {
				var want bytes.Buffer
				enc := json.NewEncoder(&want)
				enc.SetEscapeHTML(html)
				if l.indent != "" {
					enc.SetIndent(l.prefix, l.indent)
				}
				if err := enc.Encode(&c); err != nil {
					t.Fatal(err)
				}
				got, err := c.AppendJSON([]byte("x"), l.prefix, l.indent, html)
				if err != nil || string(got) != "x"+string(bytes.TrimSuffix(want.Bytes(), []byte("\n"))) {
					t.Errorf("%q with %q/%q html %v: got (%v)\n%s\nwant\n%s", c.Path, l.prefix, l.indent, html, err, got, want.Bytes())
				}
			}
		}
	}
}

// TestCleanBelowOnlyWhereCheckPathsAgrees: the short way of validatePaths
// accepts only what the long way accepts, and does accept the paths a
// deploy records.
func TestCleanBelowOnlyWhereCheckPathsAgrees(t *testing.T) {
	if filepath.Separator != '/' {
		t.Skip("the short way is for systems whose only separator is '/'")
	}
	roots := []string{"/", "/r", "/r/", "/r/./s", "/r/../s", "/a/b", "r", "//r", "/r/..", "/r/.", "", "/.r", "/r/.agents/skills"}
	rests := []string{"x", "x/y", ".x", "..x", "x.", "x/.", "x/..", ".", "..", "", "/x", "x//y", "x/", ".agents/skills/s1/SKILL.md", "x/./y", "x/../y"}
	accepted := 0
	for _, root := range roots {
		for _, rest := range rests {
			for _, path := range []string{root + "/" + rest, root + rest} {
				if !cleanBelow(root, path) {
					continue
				}
				accepted++
				if err := checkPaths(root, path); err != nil {
					t.Errorf("cleanBelow(%q, %q) accepts what checkPaths refuses: %v", root, path, err)
				}
			}
		}
	}
	for _, ok := range [][2]string{{"/", "/x"}, {"/r", "/r/x"}, {"/home/u/.agents/skills", "/home/u/.agents/skills/s00001/SKILL.md"}, {"/r", "/r/..x/.y/x.."}} {
		if !cleanBelow(ok[0], ok[1]) {
			t.Errorf("cleanBelow(%q, %q) = false: the long way is taken for a plain path", ok[0], ok[1])
		}
	}
	if accepted < 20 {
		t.Errorf("cleanBelow accepted only %d of the combinations", accepted)
	}
}
