package engine_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/agentpack/agentpack/targets"
)

// keptStatus runs status with the CLI's caches (source cache and kept
// answers) and says whether it was answered from the kept answer: such a
// status reads no source cache file. An error is returned as its text.
func (w *cacheWorld) keptStatus() (out string, kept bool) {
	w.t.Helper()
	var loads atomic.Int64
	e := engine.New(w.env, targets.NewSet())
	e.Sys = sourceReads{e.Sys, fsys.AbsPath(filepath.Join(w.env.CacheDir(), "load")), &loads}
	e.SourceCache = &engine.SourceCache{Build: "test"}
	_, s, err := e.Status(context.Background(), w.req, nil)
	if err != nil {
		return "error: " + err.Error(), loads.Load() == 0
	}
	j, _ := json.Marshal(s)
	return string(j), loads.Load() == 0
}

// warmStatus runs status until its answer is kept (the first runs after a
// write compute it: what they read is too recent to trust) and says
// whether it got there.
func (w *cacheWorld) warmStatus() bool {
	for try := 0; try < 3; try++ {
		time.Sleep(150 * time.Millisecond) // past the racy window of the last write
		if _, kept := w.keptStatus(); kept {
			return true
		}
	}
	return false
}

// freshStatus is status with no cache at all (or its error).
func (w *cacheWorld) freshStatus() string {
	w.t.Helper()
	_, s, err := w.engine(false).Status(context.Background(), w.req, nil)
	if err != nil {
		return "error: " + err.Error()
	}
	j, _ := json.Marshal(s)
	return string(j)
}

// Every way a deployed file, a managed folder or agentpack's own records
// can change that an answer kept by stat data could miss: after each, a
// status with the kept answer equals one with no cache, and before each
// the kept answer was really used.
func TestKeptStatusSeesEveryTargetEdit(t *testing.T) {
	// Each edit gets a world of its own, deployed afresh.
	var w *cacheWorld
	var skills, skill, ref string
	fresh := func() {
		w = newCacheWorld(t)
		w.deploy(w.engine(true))
		skills = filepath.Join(filepath.Dir(w.env.Cwd), ".agents", "skills")
		skill = filepath.Join(skills, "s0001", "SKILL.md")
		ref = filepath.Join(skills, "s0002", "ref", "f01.md")
	}
	edits := []struct {
		name  string
		edit  func()
		drift string // a kind the fresh status must report
	}{
		{"deployed file edited, same size, modification time put back", func() {
			fi, _ := os.Stat(skill)
			must(t, os.WriteFile(skill, sameSize(t, skill), 0o644))
			putBack(t, skill, fi)
		}, "modified"},
		{"deployed file deleted", func() { must(t, os.Remove(ref)) }, "missing"},
		{"unmanaged file added to a managed folder", func() {
			mustWrite(t, filepath.Join(skills, "s0003", "ref", "notes.md"), "mine\n")
		}, "extra"},
		{"unmanaged file added to a managed root", func() {
			mustWrite(t, filepath.Join(skills, "s0004", "extra.md"), "mine\n")
		}, "extra"},
		{"deployed file replaced by a symlink to a copy", func() {
			data, _ := os.ReadFile(skill)
			copyPath := filepath.Join(t.TempDir(), "copy.md")
			mustWrite(t, copyPath, string(data))
			must(t, os.Remove(skill))
			must(t, os.Symlink(copyPath, skill))
		}, "error"},
		{"target manifest deleted", func() {
			ents, _ := filepath.Glob(filepath.Join(skills, ".agentpack*"))
			if len(ents) == 0 {
				t.Fatal("no target manifest found under " + skills)
			}
			for _, m := range ents {
				must(t, os.RemoveAll(m))
			}
		}, ""},
	}
	for _, ed := range edits {
		fresh()
		kept := w.warmStatus()
		// A source touched: the next answer is computed again, this time
		// with the folder listings and file hashes from the stat cache,
		// and kept with what that computation looked at.
		must(t, os.Chmod(filepath.Join(w.repo, "agentpack.yaml"), 0o644))
		kept = kept && w.warmStatus()
		if !kept {
			t.Fatalf("%s: the status before the edit was not answered from the kept answer", ed.name)
		}
		ed.edit()
		var got string
		got, kept = w.keptStatus()
		want := w.freshStatus()
		if got != want {
			t.Errorf("%s: status with the kept answer\n%s\nwithout any cache\n%s", ed.name, got, want)
		}
		if kept {
			t.Errorf("%s: the kept answer was used after the edit", ed.name)
		}
		if ed.drift == "error" && !strings.HasPrefix(want, "error: ") {
			t.Errorf("%s: status did not refuse: %s", ed.name, want)
		} else if ed.drift != "" && ed.drift != "error" && !strings.Contains(want, `"kind":"`+ed.drift+`"`) {
			t.Errorf("%s: no %s drift in %s", ed.name, ed.drift, want)
		}
	}
}
