package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentpack/agentpack/engine"
)

// newTestCompleter returns a completer over the real model whose homes are
// in a fresh temp dir (HOME and AGENTPACK_HOME are set for Main too).
func newTestCompleter(t *testing.T) (*completer, engine.Env) {
	t.Helper()
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	proj := filepath.Join(dir, "proj")
	for _, d := range []string{home, filepath.Join(proj, ".git")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HOME", home)
	t.Setenv("AGENTPACK_HOME", filepath.Join(home, ".agentpack"))
	t.Setenv("CODEX_HOME", "")
	t.Setenv("NO_COLOR", "1")
	t.Chdir(proj)
	env := engine.EnvFromOS()
	model, err := completionModel()
	if err != nil {
		t.Fatal(err)
	}
	return &completer{root: model.Node, env: env}, env
}

type completionCase struct {
	name  string
	words []string
	want  []string
}

func runCompletionCases(t *testing.T, c *completer, cases []completionCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := c.Complete(tc.words)
			if !slices.Equal(got, tc.want) {
				t.Errorf("Complete(%q) = %q, want %q", tc.words, got, tc.want)
			}
		})
	}
}

func TestCompleteModel(t *testing.T) {
	c, _ := newTestCompleter(t)
	runCompletionCases(t, c, []completionCase{
		{"commands", []string{"sn"}, []string{"snapshots"}},
		{"nothing typed", nil, slices.Sorted(slices.Values(commandNames(c.root)))},
		{"hidden command is not offered", []string{"__"}, nil},
		{"a flag value is not a command", []string{"--repo", "plan", "pl"}, []string{"plan"}},
		{"a flag=value is not a command", []string{"--repo=plan", "pl"}, []string{"plan"}},
		{"a bool flag takes no value", []string{"--json", "pl"}, []string{"plan"}},
		{"short bool flags", []string{"-qv", "pl"}, []string{"plan"}},
		{"value of a path flag is a file", []string{"--repo", ""}, []string{fileDirective}},
		{"value of a path flag after a command", []string{"plan", "--repo", "x"}, []string{fileDirective}},
		{"value of --repo= is a file", []string{"--repo=x"}, []string{fileDirective}},
		{"a flag value is never a command", []string{"--machine", ""}, nil},
		{"subcommands", []string{"snapshots", ""}, []string{"list", "prune", "show"}},
		{"subcommands after a flag value", []string{"--repo", "snapshots", "snapshots", "p"}, []string{"prune"}},
		{"command flags", []string{"deploy", "--a"}, []string{"--adopt", "--allow-home-project", "--apply"}},
		{"global flags after a command", []string{"source", "list", "--pro"}, []string{"--profile"}},
		{"flags of another command are not offered", []string{"plan", "--apply"}, nil},
		{"a leaf command takes no word", []string{"plan", ""}, nil},
		{"shell", []string{"completion", ""}, []string{"bash", "fish", "powershell", "zsh"}},
		{"module type", []string{"add", ""}, []string{"agent", "command", "instructions", "mcp", "prompt", "skill"}},
		{"module type after flags", []string{"--target", "codex", "add", "--id", "x", "sk"}, []string{"skill"}},
		{"add's source spec is free text", []string{"add", "skill", ""}, nil},
		{"explain kind", []string{"explain", "d"}, []string{"diff"}},
		{"enum flag", []string{"mcp", "serve", "--log-level", "w"}, []string{"warn"}},
		{"enum flag=value", []string{"mcp", "serve", "--transport="}, []string{"--transport=http", "--transport=stdio"}},
		{"int flag", []string{"snapshots", "prune", "--keep", ""}, nil},
		{"list flag", []string{"status", "--only", "missing,m"}, []string{"missing,modified"}},
		{"list flag skips given values", []string{"status", "--only=extra,missing,"}, []string{"--only=extra,missing,modified", "--only=extra,missing,pending"}},
		{"artifact type", []string{"source", "scan", "--type", "i"}, []string{"instructions"}},
		{"help follows the command path", []string{"help", "source", "u"}, []string{"update"}},
		{"help lists top-level commands", []string{"help", "sc"}, []string{"schema"}},
		{"after -- words are not flags", []string{"help", "--", "--x"}, nil},
		{"older PowerShell's empty argument", []string{"snapshots", `""`}, []string{"list", "prune", "show"}},
	})
}

func TestCompleteDynamic(t *testing.T) {
	c, env := newTestCompleter(t)
	run := func(args ...string) string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if code := Main(args, strings.NewReader(""), &stdout, &stderr); code != 0 {
			t.Fatalf("agentpack %s: exit %d\n%s%s", strings.Join(args, " "), code, stdout.String(), stderr.String())
		}
		return stdout.String()
	}
	run("init", "--yes")
	repo := env.DefaultRepo()
	editFile(t, filepath.Join(repo, "agentpack.yaml"), func(s string) string {
		s = strings.Replace(s, "profiles:\n", "profiles:\n  work:\n    include_tags: [work]\n", 1)
		return s + "\nsources:\n  - name: team-skills\n    url: https://example.com/acme/skills.git\n" +
			"    commit: 0123456789abcdef0123456789abcdef01234567\n"
	})
	other := filepath.Join(t.TempDir(), "other")
	run("--repo", other, "init", "--yes")
	editFile(t, filepath.Join(other, "agentpack.yaml"), func(s string) string {
		return strings.ReplaceAll(s, "skill:hello", "skill:other")
	})
	var env1 struct {
		Data struct {
			SnapshotID string `json:"snapshot_id"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(run("--target", "vscode", "deploy", "--apply", "--yes", "--json")), &env1); err != nil || env1.Data.SnapshotID == "" {
		t.Fatalf("no snapshot id from deploy: %v", err)
	}
	snap := env1.Data.SnapshotID

	runCompletionCases(t, c, []completionCase{
		{"module ids", []string{"remove", "skill:"}, []string{"skill:hello"}},
		{"module ids of --repo", []string{"--repo", other, "remove", "skill:"}, []string{"skill:other"}},
		{"module ids of --repo=", []string{"--repo=" + other, "remove", "skill:"}, []string{"skill:other"}},
		{"module ids of --repo after the command", []string{"remove", "--repo", other, "skill:"}, []string{"skill:other"}},
		{"no module ids when the repo is missing", []string{"--repo", filepath.Join(other, "nope"), "remove", ""}, nil},
		{"profiles", []string{"--profile", ""}, []string{"default", "work"}},
		{"profiles of --profile=", []string{"plan", "--profile=w"}, []string{"--profile=work"}},
		{"targets", []string{"--target", ""}, []string{"all", "claude_code", "codex", "cursor", "vscode"}},
		{"targets list of add", []string{"add", "--targets", "codex,c"}, []string{"codex,claude_code", "codex,cursor"}},
		{"tags of add", []string{"add", "--tags", "w"}, []string{"work"}},
		{"snapshot ids of rollback", []string{"rollback", "--to", ""}, []string{snap, "last"}},
		{"snapshot ids of snapshots show", []string{"snapshots", "show", snap[:8]}, []string{snap}},
		{"source names", []string{"source", "update", ""}, []string{"team-skills"}},
		{"source names of remove", []string{"source", "remove", "t"}, []string{"team-skills"}},
		{"source names of diff", []string{"source", "diff", ""}, []string{"team-skills"}},
		{"source names of scan", []string{"source", "scan", ""}, []string{"team-skills"}},
		{"source of candidates", []string{"source", "candidates", "--source", ""}, []string{"team-skills"}},
		{"no sources in --repo", []string{"--repo", other, "source", "remove", ""}, nil},
	})
}

// TestCompleteReadsOnly proves completion takes no lock and recovers
// nothing: with an interrupted apply's journal in the state (which
// Engine.Snapshots would first recover, and fail on here), snapshot ids
// are still listed and no file under agentpack's home changes.
func TestCompleteReadsOnly(t *testing.T) {
	c, env := newTestCompleter(t)
	for _, args := range [][]string{{"init", "--yes"}, {"--target", "vscode", "deploy", "--apply", "--yes"}} {
		var stdout, stderr bytes.Buffer
		if code := Main(args, strings.NewReader(""), &stdout, &stderr); code != 0 {
			t.Fatalf("agentpack %s: %s", strings.Join(args, " "), stderr.String())
		}
	}
	if err := os.WriteFile(filepath.Join(env.StateDir(), "journal.json"), []byte(`{"interrupted": true}`), 0o644); err != nil {
		t.Fatal(err)
	}
	before := treeOf(t, env.AgentpackHome)
	if got := c.Complete([]string{"rollback", "--to", ""}); len(got) != 2 {
		t.Errorf("rollback --to completes %q, want one snapshot id and last", got)
	}
	for _, words := range [][]string{{"remove", ""}, {"snapshots", "show", ""}, {"--profile", ""}, {"source", "update", ""}} {
		if got := c.Complete(words); len(got) == 0 && words[0] != "source" {
			t.Errorf("%q completes nothing", words)
		}
	}
	if after := treeOf(t, env.AgentpackHome); !slices.Equal(before, after) {
		t.Errorf("completion changed agentpack's home:\nbefore %q\nafter  %q", before, after)
	}
}

func editFile(t *testing.T, path string, edit func(string) string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(edit(string(data))), 0o644); err != nil {
		t.Fatal(err)
	}
}

// treeOf lists every path under dir with its size and modification time.
func treeOf(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		out = append(out, fmt.Sprint(p, " ", info.Size(), " ", info.ModTime()))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
