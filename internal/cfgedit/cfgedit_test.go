package cfgedit

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

var server = map[string]any{"command": "npx", "args": []string{"-y", "srv"}, "env": map[string]string{"TOKEN": "${TOKEN}"}}

const claudeJSON = `{
  "numStartups": 42,
  "projects": {
    "/home/u/p": { "history": [ { "display": "hi" } ], "allowedTools": [] }
  },
  "oauthAccount": { "emailAddress": "u@example.com" },
  "mcpServers": {
    "theirs": {
      "command": "their-server"
    }
  },
  "tipsHistory": { "a": 1 }
}
`

func TestJSONSetKeepsEverythingElse(t *testing.T) {
	out, err := Set(JSON, []byte(claudeJSON), []string{"mcpServers"}, "ours", server)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(claudeJSON, `      "command": "their-server"
    }
`, `      "command": "their-server"
    },
    "ours": {
      "args": [
        "-y",
        "srv"
      ],
      "command": "npx",
      "env": {
        "TOKEN": "${TOKEN}"
      }
    }
`, 1)
	if string(out) != want {
		t.Fatalf("got\n%s\nwant\n%s", out, want)
	}
	// Removing it gives back the original bytes.
	back, err := Remove(JSON, out, []string{"mcpServers"}, "ours")
	if err != nil {
		t.Fatal(err)
	}
	if string(back) != claudeJSON {
		t.Fatalf("remove did not restore the file:\n%s", back)
	}
}

const vscodeJSONC = `// workspace MCP servers
{
	"inputs": [
		{ "type": "promptString", "id": "tok", "password": true }, // keep me
	],
	"servers": {
		/* a comment before */
		"old": { "type": "stdio", "command": "x", },
	},
}
`

func TestJSONCCommentsAndTrailingCommasSurvive(t *testing.T) {
	out, err := Set(JSON, []byte(vscodeJSONC), []string{"servers"}, "new", map[string]any{"type": "http", "url": "https://x"})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(vscodeJSONC, `"old": { "type": "stdio", "command": "x", },
`, `"old": { "type": "stdio", "command": "x", },
		"new": {
			"type": "http",
			"url": "https://x"
		},
`, 1)
	if string(out) != want {
		t.Fatalf("got\n%s\nwant\n%s", out, want)
	}
	// Replacing an entry keeps its neighbours and the comment before it.
	out2, err := Set(JSON, []byte(vscodeJSONC), []string{"servers"}, "old", map[string]any{"type": "stdio", "command": "y"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out2), "/* a comment before */\n\t\t\"old\": {\n\t\t\t\"command\": \"y\",\n\t\t\t\"type\": \"stdio\"\n\t\t},\n\t},\n}") {
		t.Fatalf("replace lost the layout:\n%s", out2)
	}
	got, err := Get(JSON, out2, []string{"servers"}, "old")
	if err != nil || string(got) != `{"command":"y","type":"stdio"}` {
		t.Fatalf("Get = %s, %v", got, err)
	}
	// Removing the last member of a trailing-comma object keeps it valid.
	out3, err := Remove(JSON, []byte(vscodeJSONC), []string{"servers"}, "old")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(out3), "// workspace MCP servers\n{\n\t\"inputs\": [\n\t\t{ \"type\": \"promptString\", \"id\": \"tok\", \"password\": true }, // keep me\n\t],") {
		t.Fatalf("remove touched other bytes:\n%s", out3)
	}
}

func TestJSONRemoveLastWithoutTrailingComma(t *testing.T) {
	in := "{\"mcpServers\": {\"a\": {\"command\": \"x\"}, \"b\": {\"command\": \"y\"}}, \"z\": 1}"
	out, err := Remove(JSON, []byte(in), []string{"mcpServers"}, "b")
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != "{\"mcpServers\": {\"a\": {\"command\": \"x\"}}, \"z\": 1}" {
		t.Fatalf("got %s", out)
	}
	out, err = Remove(JSON, out, []string{"mcpServers"}, "a")
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != "{\"mcpServers\": {}, \"z\": 1}" {
		t.Fatalf("got %s", out)
	}
}

func TestJSONNewFileAndEmpty(t *testing.T) {
	out, err := Set(JSON, nil, []string{"mcpServers"}, "a", map[string]any{"command": "x"})
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"mcpServers\": {\n    \"a\": {\n      \"command\": \"x\"\n    }\n  }\n}\n"
	if string(out) != want {
		t.Fatalf("got %q want %q", out, want)
	}
	if Empty(JSON, out, []string{"mcpServers"}) {
		t.Fatal("a file with an entry is not empty")
	}
	out, err = Remove(JSON, out, []string{"mcpServers"}, "a")
	if err != nil {
		t.Fatal(err)
	}
	if !Empty(JSON, out, []string{"mcpServers"}) {
		t.Fatalf("%q should be empty", out)
	}
	if Empty(JSON, []byte(claudeJSON), []string{"mcpServers"}) {
		t.Fatal("a file with other keys is not empty")
	}
}

func TestSyntaxErrorsHaveLines(t *testing.T) {
	_, err := Get(JSON, []byte("{\n  \"a\": 1,\n  oops\n}"), []string{"mcpServers"}, "x")
	var se *SyntaxError
	if !errors.As(err, &se) || se.Line != 3 {
		t.Fatalf("want a syntax error on line 3, got %#v", err)
	}
	_, err = Set(TOML, []byte("a = 1\n[b\nc = 2\n"), []string{"mcp_servers"}, "x", server)
	if !errors.As(err, &se) || se.Line != 2 {
		t.Fatalf("want a syntax error on line 2, got %#v", err)
	}
	_, err = Set(JSON, []byte("[1]"), []string{"mcpServers"}, "x", server)
	if !errors.As(err, &se) {
		t.Fatalf("an array document is refused, got %v", err)
	}
}

const codexTOML = `# my codex config
model = "o3" # the model

[mcp_servers.theirs]
command = "their" # keep this comment
args = [
  "a", # one
]

[mcp_servers.ours]
command = "old"

# approvals I gave by hand
[mcp_servers.ours.tools.search]
approved = true

[profiles.work]
model = "gpt"
`

func TestTOMLReplaceKeepsCommentsOrderAndSubtables(t *testing.T) {
	out, err := Set(TOML, []byte(codexTOML), []string{"mcp_servers"}, "ours", map[string]any{"command": "new", "args": []string{"x"}, "env_vars": []string{"TOKEN"}})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(codexTOML, "[mcp_servers.ours]\ncommand = \"old\"\n", "[mcp_servers.ours]\ncommand = \"new\"\nargs = [\"x\"]\nenv_vars = [\"TOKEN\"]\n", 1)
	if string(out) != want {
		t.Fatalf("got\n%s\nwant\n%s", out, want)
	}
	got, err := Get(TOML, out, []string{"mcp_servers"}, "ours")
	if err != nil || string(got) != `{"args":["x"],"command":"new","env_vars":["TOKEN"]}` {
		t.Fatalf("Get = %s, %v (the approvals table is not part of the entry)", got, err)
	}
}

func TestTOMLAddAndRemove(t *testing.T) {
	out, err := Set(TOML, []byte(codexTOML), []string{"mcp_servers"}, "more", map[string]any{"url": "https://x", "bearer_token_env_var": "TOK", "env_http_headers": map[string]string{"X-Key": "KEY"}})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(codexTOML, "approved = true\n", "approved = true\n\n[mcp_servers.more]\nurl = \"https://x\"\nbearer_token_env_var = \"TOK\"\nenv_http_headers = { X-Key = \"KEY\" }\n", 1)
	if string(out) != want {
		t.Fatalf("got\n%s\nwant\n%s", out, want)
	}
	back, err := Remove(TOML, out, []string{"mcp_servers"}, "more")
	if err != nil || string(back) != codexTOML {
		t.Fatalf("remove did not restore:\n%s (%v)", back, err)
	}
	// Removing an entry takes its own tables along, and nothing else.
	out, err = Remove(TOML, []byte(codexTOML), []string{"mcp_servers"}, "ours")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "ours") || !strings.Contains(string(out), "# approvals I gave by hand\n[profiles.work]") || !strings.HasPrefix(string(out), "# my codex config\nmodel = \"o3\" # the model\n\n[mcp_servers.theirs]\ncommand = \"their\" # keep this comment\n") {
		t.Fatalf("got\n%s", out)
	}
	// A new file, and a file without the container.
	out, err = Set(TOML, nil, []string{"mcp_servers"}, "a", map[string]any{"command": "x"})
	if err != nil || string(out) != "[mcp_servers.a]\ncommand = \"x\"\n" {
		t.Fatalf("got %q, %v", out, err)
	}
	out, err = Set(TOML, []byte("model = \"o3\""), []string{"mcp_servers"}, "a", map[string]any{"command": "x"})
	if err != nil || string(out) != "model = \"o3\"\n\n[mcp_servers.a]\ncommand = \"x\"\n" {
		t.Fatalf("got %q, %v", out, err)
	}
	if out, err = Remove(TOML, out, []string{"mcp_servers"}, "a"); err != nil || string(out) != "model = \"o3\"\n" {
		t.Fatalf("got %q, %v", out, err)
	}
}

func TestTOMLInlineEntriesAreRefused(t *testing.T) {
	for _, doc := range []string{
		"mcp_servers.a.command = \"x\"\n",
		"[mcp_servers]\na = { command = \"x\" }\n",
		"mcp_servers = { }\n",
	} {
		_, err := Set(TOML, []byte(doc), []string{"mcp_servers"}, "a", server)
		var se *SyntaxError
		if !errors.As(err, &se) || !strings.Contains(se.Msg, "inline") {
			t.Errorf("%q: want an inline refusal, got %v", doc, err)
		}
	}
}

func TestTOMLStringsEscape(t *testing.T) {
	v := map[string]any{"command": "a\"b\\c\nd\x01", "env": map[string]string{"weird key": "é"}}
	out, err := Set(TOML, nil, []string{"mcp_servers"}, "a", v)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Get(TOML, out, []string{"mcp_servers"}, "a")
	want, _ := Canonical(v)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("round trip: %s vs %s (%v)\n%s", got, want, err, out)
	}
}

// fuzzEdit checks the property every edit keeps: the result parses, Get
// returns the value set, and removing the entry again restores exactly the
// bytes around it.
func fuzzEdit(t *testing.T, f Format, container []string, doc []byte, name string, value map[string]any) {
	if _, err := Get(f, doc, container, name); err != nil {
		return // unparseable or inline inputs are refused, which is fine
	}
	had, _ := Get(f, doc, container, name)
	out, err := Set(f, doc, container, name, value)
	if err != nil {
		t.Fatalf("Set on a parsable document failed: %v\n%q", err, doc)
	}
	// Every other entry keeps its value.
	others, _ := Names(f, doc, container)
	for _, o := range others {
		if o == name {
			continue
		}
		before, err1 := Get(f, doc, container, o)
		after, err2 := Get(f, out, container, o)
		if err1 == nil && (err2 != nil || !bytes.Equal(before, after)) {
			t.Fatalf("entry %q changed: %s -> %s (%v)\n%q -> %q", o, before, after, err2, doc, out)
		}
	}
	got, err := Get(f, out, container, name)
	want, _ := Canonical(value)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("Get after Set = %s, %v; want %s\n%q -> %q", got, err, want, doc, out)
	}
	if had == nil && len(bytes.TrimSpace(doc)) > 0 {
		// A new entry was added: everything before the insertion point and
		// after it is the original text.
		back, err := Remove(f, out, container, name)
		if err != nil {
			t.Fatalf("Remove: %v", err)
		}
		if g, _ := Get(f, back, container, name); g != nil {
			t.Fatalf("entry still there after Remove: %q", back)
		}
		prefix := commonPrefix(doc, out)
		if !bytes.HasSuffix(out, doc[prefix:]) && !bytes.HasSuffix(out, bytes.TrimRight(doc[prefix:], "\n")) {
			t.Fatalf("bytes outside the entry changed:\n%q\n%q", doc, out)
		}
	}
}

func commonPrefix(a, b []byte) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

func FuzzJSONEdit(f *testing.F) {
	for _, s := range []string{claudeJSON, vscodeJSONC, "", "{}", "{\"mcpServers\":{}}", "{\"mcpServers\":{\"x\":1,}}", "// c\n{/*a*/\"a\":[1,2,],}"} {
		f.Add([]byte(s), "x", "cmd")
	}
	f.Fuzz(func(t *testing.T, doc []byte, name, cmd string) {
		if !validName(name) {
			return
		}
		fuzzEdit(t, JSON, []string{"mcpServers"}, doc, name, map[string]any{"command": cmd, "args": []string{cmd}})
	})
}

func FuzzTOMLEdit(f *testing.F) {
	for _, s := range []string{codexTOML, "", "a = 1", "[mcp_servers]\n", "[mcp_servers.x]\ncommand = \"y\"\n[other]\n"} {
		f.Add([]byte(s), "x", "cmd")
	}
	f.Fuzz(func(t *testing.T, doc []byte, name, cmd string) {
		if !validName(name) {
			return
		}
		fuzzEdit(t, TOML, []string{"mcp_servers"}, doc, name, map[string]any{"command": cmd, "env": map[string]string{"K": cmd}})
	})
}

// validName: entry names are ^[A-Za-z0-9_-]{1,64}$ (module validation).
func validName(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

func TestJSONEntriesMatchesGet(t *testing.T) {
	all, err := JSONEntries([]byte(vscodeJSONC), []string{"servers"})
	if err != nil {
		t.Fatal(err)
	}
	one, _ := Get(JSON, []byte(vscodeJSONC), []string{"servers"}, "old")
	if len(all) != 1 || !bytes.Equal(all["old"], one) {
		t.Fatalf("JSONEntries = %q, Get = %s", all, one)
	}
	if all, err := JSONEntries(nil, []string{"servers"}); err != nil || len(all) != 0 {
		t.Fatalf("empty document: %v %v", all, err)
	}
}

// TestLargeClaudeJSONRoundTrip: on a ~1 MB ~/.claude.json, adding a server
// touches only the mcpServers object, and removing it gives back the file.
func TestLargeClaudeJSONRoundTrip(t *testing.T) {
	doc := bigClaudeJSON()
	out, err := Set(JSON, doc, []string{"mcpServers"}, "ours", server)
	if err != nil {
		t.Fatal(err)
	}
	at := bytes.Index(doc, []byte(`"mcpServers"`))
	if !bytes.Equal(out[:at], doc[:at]) {
		t.Fatal("bytes before mcpServers changed")
	}
	back, err := Remove(JSON, out, []string{"mcpServers"}, "ours")
	if err != nil || !bytes.Equal(back, doc) {
		t.Fatalf("remove did not restore the file (%v)", err)
	}
}

// TestCRLFFilesStayCRLF: new lines follow the file's line endings.
func TestCRLFFilesStayCRLF(t *testing.T) {
	for _, tc := range []struct {
		f         Format
		doc       string
		container string
	}{
		{JSON, strings.ReplaceAll(claudeJSON, "\n", "\r\n"), "mcpServers"},
		{TOML, strings.ReplaceAll(codexTOML, "\n", "\r\n"), "mcp_servers"},
	} {
		out, err := Set(tc.f, []byte(tc.doc), []string{tc.container}, "new", server)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(out), "\n"); n != strings.Count(string(out), "\r\n") {
			t.Errorf("%s: mixed line endings:\n%q", tc.f, out)
		}
		back, err := Remove(tc.f, out, []string{tc.container}, "new")
		if err != nil || string(back) != tc.doc {
			t.Errorf("%s: remove did not restore: %q (%v)", tc.f, back, err)
		}
	}
}
