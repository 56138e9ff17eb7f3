package engine_test

import (
	"context"
	"fmt"
	"math/rand"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/engine/module"
	"github.com/agentpack/agentpack/targets"
)

func editRepo(t *testing.T, yaml string) (*engine.Engine, engine.Request, string) {
	t.Helper()
	env := testEnv(t)
	repo := writeRepo(t, map[string]string{
		"agentpack.yaml":         yaml,
		"modules/base/AGENTS.md": "# base\n",
		"modules/s/SKILL.md":     "---\nname: s\ndescription: d\n---\nbody\n",
	})
	return engine.New(env, targets.NewSet()), engine.Request{Repo: repo}, filepath.Join(repo, "agentpack.yaml")
}

// TestRemoveModuleKeepsSameNamedTag: `remove skill:review` deletes module
// "skill:review" and strips it from include_modules/exclude_modules only,
// never from include_tags, which names tags: otherwise the profile would
// silently stop selecting every module tagged skill:review.
func TestRemoveModuleKeepsSameNamedTag(t *testing.T) {
	yaml := `version: 1
profiles:
  default: {include_tags: [base, skill:review]}
targets:
  codex: {scope: project}
modules:
  - id: instructions:base
    type: instructions
    tags: [skill:review]
    source: {local_path: {path: modules/base}}
  - id: skill:review
    type: skill
    tags: [base]
    source: {local_path: {path: modules/s}}
`
	e, req, path := editRepo(t, yaml)
	if _, err := e.RemoveModule(context.Background(), req, "skill:review"); err != nil {
		t.Fatal(err)
	}
	m, err := loadManifest(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	mods, err := m.SelectModules("default")
	if err != nil {
		t.Fatal(err)
	}
	if len(mods) != 1 || mods[0].ID != "instructions:base" {
		t.Fatalf("removing module \"skill:review\" changed which modules are selected (include_tags edited?):\n%s", mustRead(t, path))
	}
}

// TestRemoveModuleFlowListNonASCII: the YAML node's column counts
// characters, not bytes; used as a byte offset with non-ASCII text earlier on
// the line, removing skill:b from [skill:a, skill:b] after [café] yielded
// [skill:ab].
func TestRemoveModuleFlowListNonASCII(t *testing.T) {
	yaml := `version: 1
profiles:
  default: {include_tags: [café], include_modules: [skill:a, skill:b]}
targets:
  codex: {scope: project}
modules:
  - id: skill:a
    type: skill
    source: {local_path: {path: modules/s}}
  - id: skill:b
    type: skill
    source: {local_path: {path: modules/s}}
`
	e, req, path := editRepo(t, yaml)
	if _, err := e.RemoveModule(context.Background(), req, "skill:b"); err != nil {
		t.Fatal(err)
	}
	m, err := loadManifest(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	got := m.Profiles["default"].IncludeModules
	if len(got) != 1 || got[0] != "skill:a" {
		t.Fatalf("include_modules after removing skill:b = %q, want [skill:a]; file:\n%s", got, mustRead(t, path))
	}
	want := strings.Replace(strings.Replace(yaml, "skill:a, skill:b]", "skill:a]", 1),
		"  - id: skill:b\n    type: skill\n    source: {local_path: {path: modules/s}}\n", "", 1)
	if got := mustRead(t, path); got != want {
		t.Fatalf("after remove:\n got %q\nwant %q", got, want)
	}
}

// TestRemoveLastBlockModule: removing the only module of a block-style
// list must not leave `modules:` with a null value, which the re-validation
// rejects ("modules must be a list").
func TestRemoveLastBlockModule(t *testing.T) {
	yaml := `version: 1
profiles:
  default: {include_tags: [base]}
targets:
  codex: {scope: project}
modules:
  - id: instructions:base
    type: instructions
    tags: [base]
    source: {local_path: {path: modules/base}}
`
	e, req, path := editRepo(t, yaml)
	if _, err := e.RemoveModule(context.Background(), req, "instructions:base"); err != nil {
		t.Fatalf("remove the only module: %v", err)
	}
	m, err := loadManifest(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Modules) != 0 {
		t.Fatalf("modules left: %+v", m.Modules)
	}
}

// TestAddModuleAfterDocumentEnd: a manifest ending with the YAML
// document-end marker "...". add must not insert the module after the
// marker, i.e. into a second YAML document that nothing reads.
func TestAddModuleAfterDocumentEnd(t *testing.T) {
	yaml := `version: 1
profiles:
  default: {include_tags: [base]}
targets:
  codex: {scope: project}
modules:
  - id: instructions:base
    type: instructions
    tags: [base]
    source: {local_path: {path: modules/base}}
...
`
	e, req, path := editRepo(t, yaml)
	_, err := e.AddModule(context.Background(), req, module.Module{ID: "skill:s", Type: module.TypeSkill, Tags: []string{"base"},
		Source: module.Source{LocalPath: &module.LocalPathSource{Path: "modules/s"}}})
	if err != nil {
		return // refusing is fine; silently losing the module is not
	}
	m, err := loadManifest(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Modules) != 2 {
		t.Fatalf("add reported success but the manifest has %d module(s):\n%s", len(m.Modules), mustRead(t, path))
	}
}

// TestAddModuleKeepsCRLF: on an agentpack.yaml with CRLF line endings
// (Windows checkouts, core.autocrlf), add must not insert LF-only lines and
// leave the file with mixed line endings.
func TestAddModuleKeepsCRLF(t *testing.T) {
	yaml := "version: 1\r\nprofiles:\r\n  default: {include_tags: [base]}\r\ntargets:\r\n  codex: {scope: project}\r\nmodules:\r\n  - id: instructions:base\r\n    type: instructions\r\n    tags: [base]\r\n    source: {local_path: {path: modules/base}}\r\n"
	e, req, path := editRepo(t, yaml)
	if _, err := e.AddModule(context.Background(), req, module.Module{ID: "skill:s", Type: module.TypeSkill, Tags: []string{"base"},
		Source: module.Source{LocalPath: &module.LocalPathSource{Path: "modules/s"}}}); err != nil {
		t.Fatal(err)
	}
	got := mustRead(t, path)
	lf := strings.Count(got, "\n")
	crlf := strings.Count(got, "\r\n")
	if lf != crlf {
		t.Fatalf("%d of %d lines end in a bare LF after add:\n%q", lf-crlf, lf, got)
	}
}

func localModule(id string, tags ...string) module.Module {
	return module.Module{ID: id, Type: module.TypeSkill, Tags: tags,
		Source: module.Source{LocalPath: &module.LocalPathSource{Path: "modules/s"}}}
}

// TestAddModuleCRLFExact: add on a CRLF file inserts exactly the module's
// lines, with CRLF endings, also when the file has no final line break;
// remove then gives back the original bytes.
func TestAddModuleCRLFExact(t *testing.T) {
	const head = "version: 1\r\nprofiles:\r\n  default: {include_tags: [base]}\r\ntargets:\r\n  codex: {scope: project}\r\nmodules:\r\n  - id: instructions:base\r\n    type: instructions\r\n    tags: [base]\r\n    source: {local_path: {path: modules/base}}"
	const added = "  - id: skill:s\r\n    type: skill\r\n    tags: [base]\r\n    source:\r\n      local_path:\r\n        path: modules/s"
	for _, tc := range []struct{ name, orig, want string }{
		{"final CRLF", head + "\r\n", head + "\r\n" + added + "\r\n"},
		{"no final line break", head, head + "\r\n" + added},
		{"comment after", head + "\r\n# end\r\n", head + "\r\n" + added + "\r\n# end\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, req, path := editRepo(t, tc.orig)
			if _, err := e.AddModule(context.Background(), req, localModule("skill:s", "base")); err != nil {
				t.Fatal(err)
			}
			if got := mustRead(t, path); got != tc.want {
				t.Fatalf("after add:\n got %q\nwant %q", got, tc.want)
			}
			if _, err := e.RemoveModule(context.Background(), req, "skill:s"); err != nil {
				t.Fatal(err)
			}
			if got := mustRead(t, path); got != tc.orig {
				t.Fatalf("after remove:\n got %q\nwant %q", got, tc.orig)
			}
		})
	}
}

// TestAddModuleSequenceIndent: the new item copies the layout of the last
// one — the text before its "-" and the column of its keys — whatever the
// spaces after the dash, so the result is valid YAML with the same style.
func TestAddModuleSequenceIndent(t *testing.T) {
	const head = "version: 1\nprofiles:\n  default: {include_tags: [base]}\ntargets:\n  codex: {scope: project}\nmodules:\n"
	for _, tc := range []struct{ name, item, want string }{
		{"wide gap", "  -   id: instructions:base\n      type: instructions\n      source: {local_path: {path: modules/base}}\n",
			"  -   id: skill:s\n      type: skill\n      tags: [base]\n      source:\n        local_path:\n          path: modules/s\n"},
		{"column 0", "- id: instructions:base\n  type: instructions\n  source: {local_path: {path: modules/base}}\n",
			"- id: skill:s\n  type: skill\n  tags: [base]\n  source:\n    local_path:\n      path: modules/s\n"},
		{"column 0 wide gap", "-    id: instructions:base\n     type: instructions\n     source: {local_path: {path: modules/base}}\n",
			"-    id: skill:s\n     type: skill\n     tags: [base]\n     source:\n       local_path:\n         path: modules/s\n"},
		{"dash alone", "    -\n      id: instructions:base\n      type: instructions\n      source: {local_path: {path: modules/base}}\n",
			"    - id: skill:s\n      type: skill\n      tags: [base]\n      source:\n        local_path:\n          path: modules/s\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, req, path := editRepo(t, head+tc.item)
			if _, err := e.AddModule(context.Background(), req, localModule("skill:s", "base")); err != nil {
				t.Fatal(err)
			}
			got := mustRead(t, path)
			if want := head + tc.item + tc.want; got != want {
				t.Fatalf("after add:\n got %q\nwant %q", got, want)
			}
			m, err := loadManifest(filepath.Dir(path))
			if err != nil {
				t.Fatal(err)
			}
			if len(m.Modules) != 2 || m.Modules[1].ID != "skill:s" || m.Modules[1].Source.LocalPath == nil {
				t.Fatalf("modules after add: %+v", m.Modules)
			}
		})
	}
}

// TestRemoveModuleQuotedFlowItems: quoted ids, some with escapes (\x71,
// \u0073), have tokens wider than their values; exactly the token and one
// comma go.
func TestRemoveModuleQuotedFlowItems(t *testing.T) {
	const tmpl = `version: 1
profiles:
  default: {include_tags: [base], include_modules: [%s], exclude_modules: [%s]}
targets:
  codex: {scope: project}
modules:
  - id: 'skill:its'
    type: skill
    source: {local_path: {path: modules/s}}
  - id: "skill:\x71"
    type: skill
    source: {local_path: {path: modules/s}}
  - id: skill:cafe
    type: skill
    source: {local_path: {path: modules/s}}
`
	modules := map[string]string{
		"skill:its":  "  - id: 'skill:its'\n    type: skill\n    source: {local_path: {path: modules/s}}\n",
		"skill:q":    "  - id: \"skill:\\x71\"\n    type: skill\n    source: {local_path: {path: modules/s}}\n",
		"skill:cafe": "  - id: skill:cafe\n    type: skill\n    source: {local_path: {path: modules/s}}\n",
	}
	orig := fmt.Sprintf(tmpl, `'skill:its', "skill:\x71", skill:cafe`, `"skill:q" , "skill:it\u0073"`)
	for _, tc := range []struct{ id, include, exclude string }{
		{"skill:its", `"skill:\x71", skill:cafe`, `"skill:q"`},
		{"skill:q", `'skill:its', skill:cafe`, `"skill:it\u0073"`},
		{"skill:cafe", `'skill:its', "skill:\x71"`, `"skill:q" , "skill:it\u0073"`},
	} {
		t.Run(tc.id, func(t *testing.T) {
			e, req, path := editRepo(t, orig)
			if _, err := e.RemoveModule(context.Background(), req, tc.id); err != nil {
				t.Fatal(err)
			}
			want := strings.Replace(fmt.Sprintf(tmpl, tc.include, tc.exclude), modules[tc.id], "", 1)
			if got := mustRead(t, path); got != want {
				t.Fatalf("after remove %s:\n got %q\nwant %q", tc.id, got, want)
			}
		})
	}
}

// TestRemoveModuleBlockProfileLists: block-style profile lists lose just the
// id's line; a list left empty, like `modules:` losing its last item, becomes
// `[]` (a trailing comment stays); include_tags is never touched.
func TestRemoveModuleBlockProfileLists(t *testing.T) {
	orig := `version: 1
profiles:
  default:
    include_tags:
      - base
      - skill:s
    include_modules:   # picked by hand
      - skill:s
  other:
    exclude_modules:
      - skill:x
      - skill:s # gone
targets:
  codex: {scope: project}
modules:    # every module
  # the only one
  - id: skill:s
    type: skill
    tags: [base]
    source: {local_path: {path: modules/s}}

# trailing comment
`
	want := `version: 1
profiles:
  default:
    include_tags:
      - base
      - skill:s
    include_modules: []   # picked by hand
  other:
    exclude_modules:
      - skill:x
targets:
  codex: {scope: project}
modules: []    # every module

# trailing comment
`
	e, req, path := editRepo(t, orig)
	if _, err := e.RemoveModule(context.Background(), req, "skill:s"); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, path); got != want {
		t.Fatalf("after remove:\n got %q\nwant %q", got, want)
	}
}

// TestRemoveModuleMultiLineFlowList: in a flow list spread over lines, an
// item on its own line goes with its line; a comment after it stays.
func TestRemoveModuleMultiLineFlowList(t *testing.T) {
	orig := `version: 1
profiles:
  default:
    include_tags: [base]
    include_modules: [
      skill:a,   # first
      skill:b,
      'skill:c'
    ]
targets:
  codex: {scope: project}
modules:
  - id: skill:a
    type: skill
    source: {local_path: {path: modules/s}}
  - id: skill:b
    type: skill
    source: {local_path: {path: modules/s}}
  - id: skill:c
    type: skill
    source: {local_path: {path: modules/s}}
`
	item := func(id string) string {
		return "  - id: " + id + "\n    type: skill\n    source: {local_path: {path: modules/s}}\n"
	}
	for _, tc := range []struct{ id, from, to string }{
		{"skill:a", "      skill:a,   # first\n", "         # first\n"},
		{"skill:b", "      skill:b,\n", ""},
		{"skill:c", "      'skill:c'\n", ""},
	} {
		t.Run(tc.id, func(t *testing.T) {
			e, req, path := editRepo(t, orig)
			if _, err := e.RemoveModule(context.Background(), req, tc.id); err != nil {
				t.Fatal(err)
			}
			want := strings.Replace(strings.Replace(orig, tc.from, tc.to, 1), item(tc.id), "", 1)
			if got := mustRead(t, path); got != want {
				t.Fatalf("after remove:\n got %q\nwant %q", got, want)
			}
			m, err := loadManifest(filepath.Dir(path))
			if err != nil {
				t.Fatal(err)
			}
			if got := m.Profiles["default"].IncludeModules; len(got) != 2 || slices.Contains(got, tc.id) {
				t.Fatalf("include_modules = %q", got)
			}
		})
	}
}

// TestAddRemoveRoundTrip: for hand-written manifests (comments, blank lines,
// flow and block lists, CRLF, unicode, odd indents, document markers), adding
// a module then removing it gives back the original bytes, and add changes
// nothing but inserting the module's lines.
func TestAddRemoveRoundTrip(t *testing.T) {
	manifests := map[string]string{
		"comments and blank lines": `# agentpack manifest
version: 1

# Profiles pick modules by tag.
profiles:
  default:
    include_tags: [base]   # the basics
    include_modules:
      - skill:s
  work: {include_tags: [base, work], exclude_modules: [skill:s]}

targets:
  codex: {scope: project}

modules:
  # The instructions.
  - id: instructions:base
    type: instructions
    tags: [base]
    source:
      local_path:
        path: modules/base   # shared

  - id: skill:s
    type: skill
    tags: [base]
    source: {local_path: {path: modules/s}}
  # - id: skill:old
  #   type: skill

# sources go here
sources: []
`,
		"unicode": `version: 1
profiles:
  défaut: {include_tags: [café, 'naïve', "日本"], include_modules: [skill:cafe, 'skill:naive', "skill:nihon"]}  # ünïcode
  default: {include_tags: [base]}
targets:
  codex: {scope: project}
modules:
  - id: skill:cafe   # ☕
    type: skill
    tags: [café]
    source: {local_path: {path: modules/s}}
  - id: 'skill:naive'
    type: skill
    tags: ['naïve']
    source: {local_path: {path: modules/s}}
  - id: "skill:nihon"   # 日本
    type: skill
    source: {local_path: {path: modules/s}}
`,
		"modules first, unusual indent": `modules:
-   id: instructions:base
    type: instructions
    tags: [base]
    source: {local_path: {path: modules/base}}
version: 1
profiles: {default: {include_tags: [base]}}
targets: {codex: {scope: project}}
`,
		"document markers": `---
version: 1
profiles:
  default: {include_tags: [base]}
targets:
  codex: {scope: project}
modules:
  - id: instructions:base
    type: instructions
    tags: [base]
    source: {local_path: {path: modules/base}}
...
# after the document
`,
		"no final line break": "version: 1\nprofiles:\n  default: {include_tags: [base]}\ntargets:\n  codex: {scope: project}\nmodules:\n  - id: instructions:base\n    type: instructions\n    source: {local_path: {path: modules/base}}",
		"byte-order mark":     "\uFEFFmodules:\n  - id: instructions:base\n    type: instructions\n    source: {local_path: {path: modules/base}}\nversion: 1\nprofiles: {default: {include_tags: [base]}}\ntargets: {codex: {scope: project}}\n",
	}
	manifests["CRLF"] = strings.ReplaceAll(manifests["comments and blank lines"], "\n", "\r\n")
	manifests["CRLF unicode"] = strings.ReplaceAll(manifests["unicode"], "\n", "\r\n")
	yes := true
	added := []module.Module{
		localModule("skill:new"),
		localModule("skill:nouveau-e", "base", "wörk", "é"),
		{ID: "skill:git", Type: module.TypeSkill, Targets: []string{"codex"},
			Source: module.Source{Git: &module.GitSource{URL: "https://example.com/r.git", Ref: "v1: beta", Subdir: "a b", Shallow: &yes}}},
		{ID: "instructions:pkg", Type: module.TypeInstructions, Tags: []string{"a,b", "[x]"},
			Source: module.Source{Package: &module.PackageSource{Name: "@scope/pkg", Version: "^1.2", Artifact: "#x"}}},
	}
	for name, orig := range manifests {
		for _, mod := range added {
			t.Run(name+"/"+mod.ID, func(t *testing.T) {
				e, req, path := editRepo(t, orig)
				if _, err := e.AddModule(context.Background(), req, mod); err != nil {
					t.Fatal(err)
				}
				after := mustRead(t, path)
				if !isInsertion(orig, after) {
					t.Fatalf("add changed more than inserting lines:\n%q\n→\n%q", orig, after)
				}
				m, err := loadManifest(filepath.Dir(path))
				if err != nil {
					t.Fatal(err)
				}
				got := m.Modules[len(m.Modules)-1]
				if got.ID != mod.ID || fmt.Sprint(got.Source) != fmt.Sprint(mod.Source) && mod.Source.Git == nil ||
					strings.Join(got.Tags, "|") != strings.Join(mod.Tags, "|") {
					t.Fatalf("added module reads back as %+v, want %+v", got, mod)
				}
				if _, err := e.RemoveModule(context.Background(), req, mod.ID); err != nil {
					t.Fatal(err)
				}
				if got := mustRead(t, path); got != orig {
					t.Fatalf("add then remove:\n got %q\nwant %q", got, orig)
				}
			})
		}
	}
}

// isInsertion reports whether after is before with whole lines inserted at
// one place (the line before them may gain the final line break it lacked).
func isInsertion(before, after string) bool {
	if len(after) <= len(before) {
		return false
	}
	for k := 0; k <= len(before); k++ {
		if (k == 0 || k == len(before) || before[k-1] == '\n') &&
			strings.HasPrefix(after, before[:k]) && strings.HasSuffix(after, before[k:]) {
			return true
		}
	}
	return false
}

// TestAddRemoveFlowModulesCRLF: a flow-style modules list cannot be edited
// line by line, so the file is re-rendered; it keeps its CRLF endings.
func TestAddRemoveFlowModulesCRLF(t *testing.T) {
	orig := "version: 1\r\nprofiles:\r\n  default: {include_tags: [base], include_modules: [skill:a]}\r\ntargets:\r\n  codex: {scope: project}\r\n" +
		"modules: [{id: skill:a, type: skill, source: {local_path: {path: modules/s}}}]\r\n"
	e, req, path := editRepo(t, orig)
	check := func(step string, ids ...string) {
		t.Helper()
		got := mustRead(t, path)
		if strings.Count(got, "\n") != strings.Count(got, "\r\n") {
			t.Fatalf("after %s, some lines end in a bare LF:\n%q", step, got)
		}
		m, err := loadManifest(filepath.Dir(path))
		if err != nil {
			t.Fatal(err)
		}
		var have []string
		for _, x := range m.Modules {
			have = append(have, x.ID)
		}
		if strings.Join(have, " ") != strings.Join(ids, " ") || len(m.Profiles["default"].IncludeTags) != 1 {
			t.Fatalf("after %s: modules %q, profile %+v", step, have, m.Profiles["default"])
		}
	}
	if _, err := e.AddModule(context.Background(), req, localModule("skill:b")); err != nil {
		t.Fatal(err)
	}
	check("add", "skill:a", "skill:b")
	if _, err := e.RemoveModule(context.Background(), req, "skill:a"); err != nil {
		t.Fatal(err)
	}
	check("remove", "skill:b")
}

// TestAddRemoveRoundTripRandomIDs: tags full of YAML indicators, quotes,
// escapes and non-ASCII survive add, a mention in every profile list next
// to the module's id, and remove: the file comes back byte for byte except
// the profile lists, which lose just the id. (Module ids are portable
// names, so the random words are tags and mentions of unknown modules.)
func TestAddRemoveRoundTripRandomIDs(t *testing.T) {
	alpha := []string{"a", "é", "日", "'", `"`, `\`, ":", " ", "#", ",", "[", "]", "{", "}", "-", "!", "&", "*", "\t", "?", "%", "@", "`", "|", ">"}
	r := rand.New(rand.NewSource(1))
	const base = "version: 1\r\nprofiles:\r\n  default: {include_tags: [base]}\r\ntargets:\r\n  codex: {scope: project}\r\n" +
		"modules:\r\n  -  id: instructions:base\r\n     type: instructions\r\n     source: {local_path: {path: modules/base}}\r\n...\r\n"
	for i := 0; i < 200; i++ {
		var b strings.Builder
		for j := 0; j < 2+r.Intn(6); j++ {
			b.WriteString(alpha[r.Intn(len(alpha))])
		}
		word, id := b.String(), fmt.Sprintf("skill:r%d", i)
		if strings.TrimSpace(word) == "" {
			continue
		}
		e, req, path := editRepo(t, base)
		if _, err := e.AddModule(context.Background(), req, localModule(id, word, "base")); err != nil {
			t.Fatalf("add %q: %v", id, err)
		}
		added := mustRead(t, path)
		m, err := loadManifest(filepath.Dir(path))
		if err != nil {
			t.Fatalf("add %q: %v", id, err)
		}
		if got := m.Modules[len(m.Modules)-1]; got.ID != id || strings.Join(got.Tags, "|") != word+"|base" {
			t.Fatalf("add %q reads back as %+v", id, got)
		}
		// Name the module in the profile, with the flow list add rendered.
		k := strings.Index(added, "\r\n     tags: [") + len("\r\n     tags: ")
		list := added[k : k+strings.Index(added[k:], "\r\n")]
		mustWrite(t, path, strings.Replace(added, "{include_tags: [base]}",
			"{include_tags: "+list+", include_modules: ["+id+", "+list[1:]+", exclude_modules: [q, "+id+", "+list[1:]+"}", 1))
		if _, err := e.RemoveModule(context.Background(), req, id); err != nil {
			t.Fatalf("remove %q: %v", id, err)
		}
		want := strings.Replace(base, "{include_tags: [base]}",
			"{include_tags: "+list+", include_modules: "+list+", exclude_modules: [q, "+list[1:]+"}", 1)
		if got := mustRead(t, path); got != want {
			t.Fatalf("add, then remove %q:\n got %q\nwant %q", id, got, want)
		}
	}
}
