package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentpack/agentpack/engine"
)

// TestProgressOnlyForPeopleOnATerminal: a deploy or rollback draws a bar of the files
// it writes on stderr when stderr is a terminal, and never under --json or
// -q or without a terminal.
func TestProgressOnlyForPeopleOnATerminal(t *testing.T) {
	fixtures, _ := filepath.Abs("../../fixtures/quickstart")
	cases := []struct {
		name     string
		terminal bool
		json     bool
		quiet    bool
		want     bool
	}{
		{"terminal", true, false, false, true},
		{"--json", true, true, false, false},
		{"-q", true, false, true, false},
		{"no terminal", false, false, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			env := engine.Env{Home: filepath.Join(dir, "home"), AgentpackHome: filepath.Join(dir, "home/.agentpack"), Cwd: filepath.Join(dir, "proj")}
			var stderr bytes.Buffer
			a := &App{Stderr: &stderr, Env: env}
			if c.terminal {
				a.progressOut = &stderr // what Main does when stderr is a terminal
			}
			a.Globals.JSON, a.Globals.Quiet = c.json, c.quiet
			eng := a.newEngine()
			if _, _, err := eng.Deploy(context.Background(), engine.Request{Repo: fixtures, Target: "codex"}, true, engine.ApplyOptions{}); err != nil {
				t.Fatal(err)
			}
			a.progress.clear()
			if got := strings.Contains(stderr.String(), "writing files"); got != c.want {
				t.Fatalf("deploy: bar drawn = %v, want %v; stderr %q", got, c.want, stderr.String())
			}
			stderr.Reset()
			if _, _, err := eng.Rollback(context.Background(), engine.RollbackOptions{Last: true}); err != nil {
				t.Fatal(err)
			}
			a.progress.clear()
			if got := strings.Contains(stderr.String(), "writing files"); got != c.want {
				t.Fatalf("rollback: bar drawn = %v, want %v; stderr %q", got, c.want, stderr.String())
			}
		})
	}
}
