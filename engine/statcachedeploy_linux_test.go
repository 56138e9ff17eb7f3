package engine_test

import (
	"context"
	"io/fs"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/agentpack/agentpack/targets"
)

// agedStats shows every file's modification and change times an hour
// earlier than they are, so files just written are not too recent for the
// stat cache (git's racy-clean rule), and lists the files read through it.
type agedStats struct {
	fsys.System
	mu   *sync.Mutex
	read *[]string
}

func (a agedStats) Lstat(p fsys.AbsPath) (fs.FileInfo, error) {
	fi, err := a.System.Lstat(p)
	if err != nil {
		return fi, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fi, nil
	}
	aged := *st
	aged.Ctim.Sec -= 3600
	aged.Mtim.Sec -= 3600
	return agedInfo{fi, &aged}, nil
}

func (a agedStats) ReadFile(p fsys.AbsPath) ([]byte, error) {
	a.mu.Lock()
	*a.read = append(*a.read, p.String())
	a.mu.Unlock()
	return a.System.ReadFile(p)
}

type agedInfo struct {
	fs.FileInfo
	st *syscall.Stat_t
}

func (i agedInfo) ModTime() time.Time { return i.FileInfo.ModTime().Add(-time.Hour) }
func (i agedInfo) Sys() any           { return i.st }

// TestDeployRecordsWrittenFilesInStatCache: a deploy records the stat
// data and hash of every file it writes in the stat cache, so the status
// after it vouches for them from one stat each and reads none of them.
// (Files the deploy writes are as new as can be: agedStats makes them look
// old enough to be recorded.)
func TestDeployRecordsWrittenFilesInStatCache(t *testing.T) {
	env := testEnv(t)
	repo := codexRepo(t)
	req := engine.Request{Repo: repo}
	var mu sync.Mutex
	var read []string
	newEngine := func() *engine.Engine {
		e := engine.New(env, targets.NewSet())
		e.Sys = agedStats{System: e.Sys, mu: &mu, read: &read}
		return e
	}
	_, res, err := newEngine().Deploy(context.Background(), req, true, engine.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	written := map[string]bool{}
	for _, c := range res.Changes {
		// AGENTS.md gathers the agentpack blocks of instructions: status
		// reads it for them, whatever the cache says of the whole file.
		if c.Path.Base() != "AGENTS.md" {
			written[c.Path.String()] = true
		}
	}
	if len(written) != 2 {
		t.Fatalf("the deploy wrote %d files besides AGENTS.md, want the skill's 2", len(written))
	}
	read = nil
	if _, _, err := newEngine().Status(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	for _, p := range read {
		if written[p] {
			t.Errorf("status read %s, which the deploy just wrote (its stat cache entry is missing)", p)
		}
	}
}
