package engine_test

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/agentpack/agentpack/targets"
)

// countingSystem counts the bytes written through it, by folder kind.
type countingSystem struct {
	fsys.System
	state fsys.AbsPath
	mu    sync.Mutex
	bytes map[string]int64 // "snapshots", "state" or "targets"
}

func (c *countingSystem) WriteFile(path fsys.AbsPath, data []byte, perm fs.FileMode) error {
	kind := "targets"
	switch {
	case c.state.JoinName("snapshots").Contains(path):
		kind = "snapshots"
	case c.state.Contains(path):
		kind = "state"
	}
	c.mu.Lock()
	c.bytes[kind] += int64(len(data))
	c.mu.Unlock()
	return c.System.WriteFile(path, data, perm)
}

// report puts the bytes counted into b's metrics, per iteration.
func (c *countingSystem) report(b *testing.B) {
	for _, kind := range []string{"snapshots", "state", "targets"} {
		b.ReportMetric(float64(c.bytes[kind])/float64(b.N), kind+"-B/op")
	}
}

// onePercentBench deploys benchRepo(1000, 10) once, then returns an engine
// whose writes are counted and a function that changes 1% of the source
// files (100 of 10,000), differently on each call.
func onePercentBench(b *testing.B) (*engine.Engine, *countingSystem, engine.Request, func()) {
	repo := benchRepo(b, 1000, 10)
	env := testEnv(b)
	e := engine.New(env, targets.NewSet())
	req := engine.Request{Repo: repo}
	if _, _, err := e.Deploy(context.Background(), req, true, engine.ApplyOptions{}); err != nil {
		b.Fatal(err)
	}
	cs := &countingSystem{System: e.Sys, state: fsys.AbsPath(env.StateDir()), bytes: map[string]int64{}}
	e.Sys = cs
	round := 0
	change := func() {
		round++
		for i := 0; i < 100; i++ {
			p := filepath.Join(repo, "modules", fmt.Sprintf("s%04d", i*10), "ref", "f01.md")
			mustWrite(b, p, strings.Repeat(fmt.Sprintf("round %d of file %d\n", round, i), 40))
		}
	}
	return e, cs, req, change
}

// BenchmarkDeployOnePercent10k deploys a change of 100 of 10,000 deployed
// files. What it writes (targets-B/op: the 100 files and the manifest;
// snapshots-B/op: the snapshot's pack, record and journal copy) grows with
// the change, not with the 10,000 files.
func BenchmarkDeployOnePercent10k(b *testing.B) {
	e, cs, req, change := onePercentBench(b)
	for b.Loop() {
		b.StopTimer()
		change()
		b.StartTimer()
		_, d, err := e.Deploy(context.Background(), req, true, engine.ApplyOptions{})
		if err != nil || d.Summary.Update != 100 {
			b.Fatalf("deploy: %v (%+v)", err, d.Summary)
		}
	}
	cs.report(b)
}

// BenchmarkRollbackOnePercent10k rolls back a deploy that changed 100 of
// 10,000 files (`rollback --last`); only the rollback's writes are
// counted, as in BenchmarkDeployOnePercent10k.
func BenchmarkRollbackOnePercent10k(b *testing.B) {
	e, cs, req, change := onePercentBench(b)
	rolledBack := map[string]int64{}
	for b.Loop() {
		b.StopTimer()
		change()
		if _, _, err := e.Deploy(context.Background(), req, true, engine.ApplyOptions{}); err != nil {
			b.Fatal(err)
		}
		cs.bytes = rolledBack
		b.StartTimer()
		r, _, err := e.Rollback(context.Background(), engine.RollbackOptions{Last: true})
		b.StopTimer()
		if err != nil || r.Restored != 100 {
			b.Fatalf("rollback: %v (%+v)", err, r)
		}
		cs.bytes = map[string]int64{}
		b.StartTimer()
	}
	cs.bytes = rolledBack
	cs.report(b)
}

// BenchmarkDeployDurable10k deploys 10,000 files into an empty project with
// AGENTPACK_FSYNC=1: one syncfs barrier on Linux, an fsync per file and
// folder elsewhere.
func BenchmarkDeployDurable10k(b *testing.B) {
	repo := benchRepo(b, 1000, 10)
	for b.Loop() {
		b.StopTimer()
		env := testEnv(b)
		env.Fsync = true
		e := engine.New(env, targets.NewSet())
		b.StartTimer()
		if _, _, err := e.Deploy(context.Background(), engine.Request{Repo: repo}, true, engine.ApplyOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
