package engine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/engine/manifest"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/agentpack/agentpack/targets"
)

// TestConcurrentAddRemoveKeepEveryEdit: add and remove read agentpack.yaml,
// edit it and write it back. Without the state lock, parallel runs each
// wrote their own edit over the others' and most modules were lost.
func TestConcurrentAddRemoveKeepEveryEdit(t *testing.T) {
	const n = 12
	_, req, path := editRepo(t, codexOnlyManifest)
	env := testEnv(t)
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("skill:s%02d", i)
	}
	run := func(op func(e *engine.Engine, id string) error) {
		t.Helper()
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i, id := range ids {
			wg.Go(func() { errs[i] = op(engine.New(env, targets.NewSet()), id) }) // one engine per "process"
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("%s: %v", ids[i], err)
			}
		}
	}
	run(func(e *engine.Engine, id string) error {
		_, err := e.AddModule(context.Background(), req, localModule(id, "base"))
		return err
	})
	m, err := loadManifest(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	got := moduleIDs(m)
	for _, id := range ids {
		if !slices.Contains(got, id) {
			t.Fatalf("after %d parallel adds, %s is missing; modules: %v", n, id, got)
		}
	}
	run(func(e *engine.Engine, id string) error {
		_, err := e.RemoveModule(context.Background(), req, id)
		return err
	})
	if got := mustRead(t, path); got != codexOnlyManifest {
		t.Fatalf("after adding and removing %d modules in parallel:\n%s", n, got)
	}
}

func moduleIDs(m *manifest.Manifest) []string {
	var ids []string
	for _, mod := range m.Modules {
		ids = append(ids, mod.ID)
	}
	return ids
}

// TestEditsTakeTheStateLock: while another agentpack holds the lock, add,
// remove and init wait for it and then give up with E_LOCKED, writing
// nothing; a dry run neither waits nor creates the lock file.
func TestEditsTakeTheStateLock(t *testing.T) {
	defer func(d time.Duration) { engine.LockTimeout = d }(engine.LockTimeout)
	engine.LockTimeout = 50 * time.Millisecond
	_, req, path := editRepo(t, codexOnlyManifest)
	env := testEnv(t)
	initDir := filepath.Join(t.TempDir(), "new")
	edits := map[string]func(e *engine.Engine) error{
		"add": func(e *engine.Engine) error {
			_, err := e.AddModule(context.Background(), req, localModule("skill:new", "base"))
			return err
		},
		"remove": func(e *engine.Engine) error {
			_, err := e.RemoveModule(context.Background(), req, "skill:s")
			return err
		},
		"init": func(e *engine.Engine) error {
			_, err := e.InitRepo(context.Background(), initDir, false)
			return err
		},
	}
	for name, edit := range edits {
		t.Run(name+" dry run", func(t *testing.T) {
			e := engine.New(env, targets.NewSet())
			e.Sys = fsys.NewDryRunSystem(e.Sys)
			if err := edit(e); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(env.StateDir(), "lock")); err == nil {
				t.Fatal("a dry run created the lock file")
			}
		})
	}
	holding, release, done := make(chan struct{}), make(chan struct{}), make(chan error)
	go func() {
		done <- engine.New(env, targets.NewSet()).WithLock(context.Background(), "deploy --apply", func([]string) error {
			close(holding)
			<-release
			return nil
		})
	}()
	<-holding
	for name, edit := range edits {
		t.Run(name, func(t *testing.T) {
			if err := edit(engine.New(env, targets.NewSet())); apperr.CodeOf(err) != apperr.Locked {
				t.Fatalf("%s while the lock is held = %v, want %s", name, err, apperr.Locked)
			}
		})
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, path); got != codexOnlyManifest {
		t.Errorf("agentpack.yaml changed while locked:\n%s", got)
	}
	if _, err := os.Stat(initDir); err == nil {
		t.Errorf("init wrote %s while locked", initDir)
	}
}

// TestRepeatedTopLevelKeyRefused: with a top-level key given twice, plan
// used the last value while add and remove edited the first. It is refused
// like a key repeated inside a module: E_CONFIG_INVALID with both lines.
func TestRepeatedTopLevelKeyRefused(t *testing.T) {
	const base = "version: 1\nprofiles:\n  default: {include_tags: [base]}\ntargets:\n  codex: {scope: project}\n" +
		"modules:\n  - id: instructions:base\n    type: instructions\n    tags: [base]\n    source: {local_path: {path: modules/base}}\n" +
		"sources: []\n"
	for key, again := range map[string]string{
		"version":  "version: 1\n",
		"profiles": "profiles:\n  default: {include_tags: [other]}\n",
		"targets":  "targets:\n  claude_code: {scope: project}\n",
		"modules":  "modules:\n  - id: skill:s\n    type: skill\n    tags: [base]\n    source: {local_path: {path: modules/s}}\n",
		"sources":  "sources: []\n",
	} {
		t.Run(key, func(t *testing.T) {
			yaml := base + again
			e, req, path := editRepo(t, yaml)
			first := 1 + strings.Count(base[:strings.Index(base, key+":")], "\n")
			second := 1 + strings.Count(base, "\n")
			check := func(op string, err error) {
				t.Helper()
				if apperr.CodeOf(err) != apperr.ConfigInvalid || !strings.Contains(apperr.As(err).Message, fmt.Sprintf("line %d: mapping key %q already defined at line %d", second, key, first)) {
					t.Fatalf("%s = %v, want %s naming %q at lines %d and %d", op, err, apperr.ConfigInvalid, key, first, second)
				}
			}
			_, err := manifest.Parse([]byte(yaml), targets.NewSet().Names())
			check("manifest.Parse", err)
			_, _, err = e.Plan(context.Background(), req)
			check("plan", err)
			_, err = e.AddModule(context.Background(), req, localModule("skill:new", "base"))
			check("add", err)
			_, err = e.RemoveModule(context.Background(), req, "instructions:base")
			check("remove", err)
			if got := mustRead(t, path); got != yaml {
				t.Fatalf("agentpack.yaml was edited:\n%s", got)
			}
		})
	}
}

// TestEnvRefusesMissingOrRelativeHomes: with HOME unset (cron, systemd,
// containers) or relative, or a relative AGENTPACK_HOME or CODEX_HOME,
// user-scope files and agentpack's state went into the working directory.
// Every edit now refuses with E_CONFIG_INVALID naming the variable.
func TestEnvRefusesMissingOrRelativeHomes(t *testing.T) {
	abs := t.TempDir()
	tests := []struct {
		name, variable                 string
		home, agentpackHome, codexHome string
	}{
		{"HOME unset", "HOME", "", "", ""},
		{"HOME relative", "HOME", "home", "", ""},
		{"HOME relative, AGENTPACK_HOME absolute", "HOME", "home", abs, ""},
		{"AGENTPACK_HOME relative", "AGENTPACK_HOME", abs, "state", ""},
		{"AGENTPACK_HOME unexpanded ~user", "AGENTPACK_HOME", abs, "~other/.agentpack", ""},
		{"CODEX_HOME relative", "CODEX_HOME", abs, "", "codex"},
		{"CODEX_HOME ./relative", "CODEX_HOME", abs, "", "./codex"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cwd := t.TempDir()
			t.Chdir(cwd)
			t.Setenv("HOME", tc.home)
			t.Setenv("AGENTPACK_HOME", tc.agentpackHome)
			t.Setenv("CODEX_HOME", tc.codexHome)
			env := engine.EnvFromOS()
			err := env.Check()
			ae := &apperr.Error{}
			if err != nil {
				ae = apperr.As(err)
			}
			if ae.Code != apperr.ConfigInvalid || ae.Details["variable"] != tc.variable ||
				!strings.Contains(ae.Message, tc.variable) || !strings.Contains(ae.Hint, "set "+tc.variable+" to an absolute path") {
				t.Fatalf("Check() = %v (hint %q, details %v), want %s naming %s", err, ae.Hint, ae.Details, apperr.ConfigInvalid, tc.variable)
			}
			e := engine.New(env, targets.NewSet())
			if _, err := e.InitRepo(context.Background(), env.ResolveRepo(""), false); apperr.CodeOf(err) != apperr.ConfigInvalid {
				t.Errorf("init = %v, want %s", err, apperr.ConfigInvalid)
			}
			repo := codexRepo(t)
			before := mustRead(t, filepath.Join(repo, "agentpack.yaml"))
			if _, err := e.AddModule(context.Background(), engine.Request{Repo: repo}, localModule("skill:new", "base")); apperr.CodeOf(err) != apperr.ConfigInvalid {
				t.Errorf("add = %v, want %s", err, apperr.ConfigInvalid)
			}
			if _, err := e.RemoveModule(context.Background(), engine.Request{Repo: repo}, "skill:s"); apperr.CodeOf(err) != apperr.ConfigInvalid {
				t.Errorf("remove = %v, want %s", err, apperr.ConfigInvalid)
			}
			if _, _, err := e.SourceList(context.Background(), engine.Request{Repo: repo}); apperr.CodeOf(err) != apperr.ConfigInvalid {
				t.Errorf("source list = %v, want %s", err, apperr.ConfigInvalid)
			}
			if got := mustRead(t, filepath.Join(repo, "agentpack.yaml")); got != before {
				t.Errorf("agentpack.yaml was edited:\n%s", got)
			}
			if ents, _ := os.ReadDir(cwd); len(ents) > 0 {
				t.Errorf("files were written into the working directory: %v", ents)
			}
		})
	}
}

// TestEnvAcceptsAbsoluteAndTildeHomes: the valid settings still work,
// including CODEX_HOME=~/.codex (targets expand the ~).
func TestEnvAcceptsAbsoluteAndTildeHomes(t *testing.T) {
	home := t.TempDir()
	for _, tc := range []struct{ agentpackHome, codexHome string }{
		{"", ""},
		{"~/.ap", "~/.codex"},
		{filepath.Join(home, "ap"), filepath.Join(home, "codex")},
	} {
		t.Setenv("HOME", home)
		t.Setenv("AGENTPACK_HOME", tc.agentpackHome)
		t.Setenv("CODEX_HOME", tc.codexHome)
		if err := engine.EnvFromOS().Check(); err != nil {
			t.Errorf("AGENTPACK_HOME=%q CODEX_HOME=%q: %v", tc.agentpackHome, tc.codexHome, err)
		}
	}
}
