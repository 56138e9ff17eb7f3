package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/internal/fsys"
)

// The capability table picks each command's System: a command that does
// not mutate runs on a System that refuses writes, a recorded dry run on
// one that only records, and a mutation on the real disk.
func TestCommandSystemStack(t *testing.T) {
	_, env := newTestCompleter(t)
	var seen []string
	engineHook = func(e *engine.Engine) { seen = append(seen, fmt.Sprintf("%T", e.Sys)) }
	t.Cleanup(func() { engineHook = nil })
	run := func(args ...string) []string {
		t.Helper()
		seen = nil
		var stdout, stderr bytes.Buffer
		if code := Main(args, strings.NewReader(""), &stdout, &stderr); code != 0 {
			t.Fatalf("agentpack %s: exit %d\n%s%s", strings.Join(args, " "), code, stdout.String(), stderr.String())
		}
		return seen
	}
	const (
		readOnly  = "*fsys.ReadOnlySystem"
		recording = "*fsys.DryRunSystem"
		real      = "*fsys.RealSystem"
	)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"init", "--yes"}, real},
		{[]string{"plan"}, readOnly},
		{[]string{"diff"}, readOnly},
		{[]string{"preview", "--diff"}, readOnly},
		{[]string{"status"}, readOnly},
		{[]string{"explain", "plan"}, readOnly},
		{[]string{"doctor"}, readOnly},
		{[]string{"deploy"}, readOnly},
		{[]string{"deploy", "--apply", "--dry-run"}, readOnly},
		{[]string{"import"}, readOnly},
		{[]string{"source", "list"}, readOnly},
		{[]string{"snapshots"}, readOnly},
		{[]string{"lock", "--dry-run"}, recording},
		{[]string{"snapshots", "prune", "--keep", "1", "--dry-run"}, recording},
		{[]string{"deploy", "--apply", "--yes"}, real},
		{[]string{"snapshots", "show", "last"}, readOnly},
	}
	for _, c := range cases {
		got := run(append([]string{"--repo", env.DefaultRepo()}, c.args...)...)
		if len(got) == 0 {
			t.Errorf("%s built no engine", strings.Join(c.args, " "))
			continue
		}
		for _, g := range got {
			if g != c.want {
				t.Errorf("%s ran on %s, want %s", strings.Join(c.args, " "), g, c.want)
			}
		}
	}
}

// A read-only engine refuses writes outside its caches, and still writes
// the caches.
func TestReadOnlyEngineWritesOnlyCaches(t *testing.T) {
	_, env := newTestCompleter(t)
	e := engine.New(env, nil)
	e.ReadOnly()
	repoFile := fsys.AbsPath(env.DefaultRepo()).JoinName("x")
	if err := e.Sys.WriteFile(repoFile, []byte("x"), 0o644); err == nil {
		t.Fatalf("a read-only engine wrote %s", repoFile)
	}
	cacheFile := fsys.AbsPath(env.CacheDir()).JoinName("git").JoinName("x")
	if err := e.Sys.WriteFile(cacheFile, []byte("x"), 0o644); err != nil {
		t.Fatalf("a read-only engine cannot write its cache: %v", err)
	}
}
