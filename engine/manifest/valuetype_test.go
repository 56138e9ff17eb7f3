package manifest_test

import (
	"strings"
	"testing"

	"github.com/agentpack/agentpack/engine/manifest"
)

// TestValueTypeErrors: a value of the wrong type was yaml's "line 5:
// cannot unmarshal !!str `base` into []string" behind the top-level key;
// it names the key's path, the expected type, the type found and the line,
// with the same four in the details.
func TestValueTypeErrors(t *testing.T) {
	const head = "version: 1\nprofiles:\n  default: {include_tags: [base]}\ntargets:\n  codex: {}\nmodules:\n"
	const base = "  - id: instructions:base\n    type: instructions\n    tags: [base]\n    source: {local_path: {path: modules/base}}\n"
	for _, tc := range []struct {
		name, yaml, key string
		line            int
		expected, got   string
		msg             string
	}{
		{"module tags", head + base + "  - id: skill:s\n    type: skill\n    tags: base\n    source: {local_path: {path: s}}\n",
			"modules[1].tags", 13, "list of strings", "string", "modules[1].tags: expected a list of strings, got a string (line 13)"},
		{"module tag item", head + "  - id: skill:s\n    type: skill\n    tags: [a, {b: c}]\n    source: {local_path: {path: s}}\n",
			"modules[0].tags[1]", 9, "string", "mapping", "modules[0].tags[1]: expected a string, got a mapping (line 9)"},
		{"module targets", head + "  - {id: skill:s, type: skill, targets: codex, source: {local_path: {path: s}}}\n",
			"modules[0].targets", 7, "list of strings", "string", "modules[0].targets: expected a list of strings, got a string (line 7)"},
		{"enabled", head + "  - id: skill:s\n    type: skill\n    enabled: maybe\n    source: {local_path: {path: s}}\n",
			"modules[0].enabled", 9, "boolean", "string", "modules[0].enabled: expected a boolean (true or false), got a string (line 9)"},
		{"enabled list", head + "  - id: skill:s\n    type: skill\n    enabled: [true]\n    source: {local_path: {path: s}}\n",
			"modules[0].enabled", 9, "boolean", "list", "modules[0].enabled: expected a boolean (true or false), got a list (line 9)"},
		{"id", head + "  - id: [skill, s]\n    type: skill\n    source: {local_path: {path: s}}\n",
			"modules[0].id", 7, "string", "list", "modules[0].id: expected a string, got a list (line 7)"},
		{"metadata", head + "  - id: skill:s\n    type: skill\n    metadata: 3\n    source: {local_path: {path: s}}\n",
			"modules[0].metadata", 9, "mapping", "integer", "modules[0].metadata: expected a mapping, got an integer (line 9)"},
		{"source", head + "  - id: skill:s\n    type: skill\n    source: modules/s\n",
			"modules[0].source", 9, "mapping", "string", "modules[0].source: expected a mapping, got a string (line 9)"},
		{"local path", head + "  - id: skill:s\n    type: skill\n    source:\n      local_path:\n        path: [a, b]\n",
			"modules[0].source.local_path.path", 11, "string", "list", "modules[0].source.local_path.path: expected a string, got a list (line 11)"},
		{"local_path string", head + "  - id: skill:s\n    type: skill\n    source: {local_path: modules/s}\n",
			"modules[0].source.local_path", 9, "mapping", "string", "modules[0].source.local_path: expected a mapping, got a string (line 9)"},
		{"git url", head + "  - id: skill:s\n    type: skill\n    source: {git: {url: {u: x}}}\n",
			"modules[0].source.git.url", 9, "string", "mapping", "modules[0].source.git.url: expected a string, got a mapping (line 9)"},
		{"git shallow", head + "  - id: skill:s\n    type: skill\n    source: {git: {url: https://x/y.git, shallow: [1]}}\n",
			"modules[0].source.git.shallow", 9, "boolean", "list", "modules[0].source.git.shallow: expected a boolean (true or false), got a list (line 9)"},
		{"package name", head + "  - id: skill:s\n    type: skill\n    source: {package: {name: [a]}}\n",
			"modules[0].source.package.name", 9, "string", "list", "modules[0].source.package.name: expected a string, got a list (line 9)"},
		{"include_tags", "version: 1\nprofiles:\n  default:\n    include_tags: base\n",
			"profiles.default.include_tags", 4, "list of strings", "string", "profiles.default.include_tags: expected a list of strings, got a string (line 4)"},
		{"include_modules", "version: 1\nprofiles:\n  default: {include_tags: [base]}\n  work: {include_modules: {skill:a: true}}\n",
			"profiles.work.include_modules", 4, "list of strings", "mapping", "profiles.work.include_modules: expected a list of strings, got a mapping (line 4)"},
		{"exclude_modules", "version: 1\nprofiles:\n  default: {exclude_modules: 7}\n",
			"profiles.default.exclude_modules", 3, "list of strings", "integer", "profiles.default.exclude_modules: expected a list of strings, got an integer (line 3)"},
		{"target scope", "version: 1\nprofiles: {default: {}}\ntargets:\n  codex: {scope: [user]}\n",
			"targets.codex.scope", 4, "string", "list", "targets.codex.scope: expected a string, got a list (line 4)"},
		{"target options", "version: 1\nprofiles: {default: {}}\ntargets:\n  codex:\n    options: [a]\n",
			"targets.codex.options", 5, "mapping", "list", "targets.codex.options: expected a mapping, got a list (line 5)"},
		{"alias", "version: 1\nprofiles:\n  default: {include_tags: &b base}\n  work: {include_tags: *b}\n",
			"profiles.default.include_tags", 3, "list of strings", "string", "profiles.default.include_tags: expected a list of strings, got a string (line 3)"},
		{"alias use", "version: 1\nx: &b {a: 1}\nprofiles:\n  default:\n    include_tags: *b\n",
			"profiles.default.include_tags", 5, "list of strings", "mapping", "profiles.default.include_tags: expected a list of strings, got a mapping (line 5)"},
		{"version", "version: \"1\"\nprofiles: {default: {}}\n",
			"version", 1, "integer", "string", "version: expected an integer, got a string (line 1)"},
		{"version float", "version: 1.5\nprofiles: {default: {}}\n",
			"version", 1, "integer", "number", "version: expected an integer, got a number (line 1)"},
		{"modules", "version: 1\nprofiles: {default: {}}\nmodules: {id: skill:s}\n",
			"modules", 3, "list", "mapping", "modules: expected a list of modules, got a mapping (line 3)"},
		{"profiles", "version: 1\nprofiles: [default]\n",
			"profiles", 2, "mapping", "list", "profiles: expected a mapping of profiles, got a list (line 2)"},
		{"artifact source url", "version: 1\nprofiles: {default: {}}\nsources:\n  - {name: a, url: [x]}\n",
			"sources[0].url", 4, "string", "list", "sources[0].url: expected a string, got a list (line 4)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := manifest.Parse([]byte(tc.yaml), known)
			ae := wantConfigErr(t, err)
			if ae.Message != tc.msg {
				t.Fatalf("message\n got %q\nwant %q", ae.Message, tc.msg)
			}
			want := map[string]any{"key": tc.key, "line": tc.line, "expected": tc.expected, "got": tc.got}
			for k, v := range want {
				if ae.Details[k] != v {
					t.Fatalf("details %v, want %s=%v", ae.Details, k, v)
				}
			}
			if !strings.Contains(ae.Hint, tc.key) {
				t.Fatalf("hint %q should name %s", ae.Hint, tc.key)
			}
		})
	}
}

// TestValueTypesAccepted: what yaml decoded before still loads: null and
// empty lists, numbers and booleans where a string is expected, yes/no
// booleans, aliases.
func TestValueTypesAccepted(t *testing.T) {
	data := "version: 1\nprofiles:\n  default: {include_tags: &t [base, 2024], include_modules: [], exclude_modules: ~}\n" +
		"targets:\n  codex: {scope: project, options: {codex_home: ~/.codex}}\nmodules:\n" +
		"  - id: skill:s\n    type: skill\n    enabled: yes\n    tags: *t\n    targets:\n" +
		"    source: {git: {url: https://x/y.git, ref: 1.10, shallow: false}}\n" +
		"  - {id: prompt:p, type: prompt, enabled: false, tags: [3], metadata: {a: 1}, source: {local_path: {path: p.md}}}\n"
	m, err := manifest.Parse([]byte(data), known)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Modules[0]; got.Source.Git.Ref != "1.10" || !got.IsEnabled() || strings.Join(got.Tags, ",") != "base,2024" {
		t.Fatalf("module decoded as %+v", got)
	}
}

// TestByteOrderMark: agentpack.yaml saved with a UTF-8 byte-order mark (as
// some Windows editors do) loads, and its lines are counted as without it.
func TestByteOrderMark(t *testing.T) {
	const data = "\uFEFFversion: 1\nprofiles:\n  default: {include_tags: [base]}\nmodules:\n  - id: skill:s\n    type: skill\n"
	m, err := manifest.Parse([]byte(data+"    source: {local_path: {path: s}}\n"), known)
	if err != nil {
		t.Fatal(err)
	}
	if m.Version != 1 || len(m.Modules) != 1 || m.Lines["skill:s"] != 5 {
		t.Fatalf("parsed %+v", m)
	}
	_, err = manifest.Parse([]byte(data+"    tags: base\n    source: {local_path: {path: s}}\n"), known)
	if ae := wantConfigErr(t, err); ae.Details["line"] != 7 {
		t.Fatalf("want the tags error at line 7, got %v", err)
	}
	_, err = manifest.Parse([]byte("\uFEFFversion: 1\nprofiles: [\n"), known)
	if ae := wantConfigErr(t, err); ae.Details["line"] != 2 {
		t.Fatalf("want the syntax error at line 2, got %v", err)
	}
}
