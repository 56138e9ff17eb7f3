package engine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/targets"
)

// cacheBench is a repo of files/10 skills × 10 files and engines over it
// with the source cache on.
func cacheBench(b *testing.B, files int) (engine.Env, engine.Request, func() *engine.Engine) {
	env := testEnv(b)
	req := engine.Request{Repo: benchRepo(b, files/10, 10)}
	return env, req, func() *engine.Engine {
		e := engine.New(env, targets.NewSet())
		e.SourceCache = &engine.SourceCache{Build: "bench"}
		return e
	}
}

// BenchmarkWarmCache runs status, plan and a no-op deploy --apply over a
// deployed, unchanged repo of 1,000 and 10,000 files with the source cache
// warm: each loads the compiled state from one file after a stat of every
// path it came from. Compare with BenchmarkStatus10k (no cache) and
// BenchmarkReadHash10k (the floor).
func BenchmarkWarmCache(b *testing.B) {
	b.ReportAllocs()
	for _, files := range []int{1000, 10000} {
		_, req, newEngine := cacheBench(b, files)
		ctx := context.Background()
		if _, _, err := newEngine().Deploy(ctx, req, true, engine.ApplyOptions{}); err != nil {
			b.Fatal(err)
		}
		time.Sleep(150 * time.Millisecond) // past the racy window, so the next load is cached
		if _, _, err := newEngine().Plan(ctx, req); err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("status/%d", files), func(b *testing.B) {
			for b.Loop() {
				if _, s, err := newEngine().Status(ctx, req, nil); err != nil || len(s.Drift) != 0 {
					b.Fatal(err, s)
				}
			}
		})
		b.Run(fmt.Sprintf("plan/%d", files), func(b *testing.B) {
			for b.Loop() {
				if _, p, err := newEngine().Plan(ctx, req); err != nil || len(p.Changes) != 0 {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("deploy-noop/%d", files), func(b *testing.B) {
			for b.Loop() {
				if _, d, err := newEngine().Deploy(ctx, req, true, engine.ApplyOptions{}); err != nil || d.Applied {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSourceCacheBytes measures, with allocations (-benchmem), what
// the source cache costs and saves over 1,000 and 10,000 files that are
// not deployed yet (every file a create): "cold" plans with the cache
// emptied first (read, parse, hash, compile and write the cache file);
// "plan" plans from the warm cache, which keeps hashes, not bytes, so no
// source file is read; "diff" shows every create from the warm cache, so
// each file's bytes are read, once, when its diff is made.
func BenchmarkSourceCacheBytes(b *testing.B) {
	for _, files := range []int{1000, 10000} {
		env, req, newEngine := cacheBench(b, files)
		ctx := context.Background()
		load := filepath.Join(env.CacheDir(), "load")
		time.Sleep(150 * time.Millisecond) // past the racy window of benchRepo's writes
		b.Run(fmt.Sprintf("cold/%d", files), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				if err := os.RemoveAll(load); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if _, p, err := newEngine().Plan(ctx, req); err != nil || p.Summary.Create != files {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("plan/%d", files), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, p, err := newEngine().Plan(ctx, req); err != nil || p.Summary.Create != files {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("diff/%d", files), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, d, err := newEngine().Diff(ctx, req); err != nil || d.Changes[0].Unified.IsZero() {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkColdPlan plans and diffs 10,000 files that are not deployed yet
// on a machine with nothing cached (no source cache, no stat cache: both
// are removed before each run), and measures in the same iterations the
// floors they are held to (issue #15: ≤ 1.2× the first): "x-sha256sum" is
// the time over that of one goroutine finding, reading and hashing the
// same files (hashTree, `find | xargs sha256sum`), "x-floor" over the same
// work on four goroutines (BenchmarkReadHash10k's). Allocations with
// -benchmem.
func BenchmarkColdPlan(b *testing.B) {
	const files = 10000
	env, req, newEngine := cacheBench(b, files)
	modules := filepath.Join(req.Repo, "modules")
	ctx := context.Background()
	time.Sleep(150 * time.Millisecond) // past the racy window of benchRepo's writes
	ops := []struct {
		name string
		run  func(e *engine.Engine) error
	}{
		{"plan", func(e *engine.Engine) error {
			if _, p, err := e.Plan(ctx, req); err != nil || p.Summary.Create != files {
				return fmt.Errorf("plan: %v", err)
			}
			return nil
		}},
		{"diff", func(e *engine.Engine) error {
			if _, d, err := e.Diff(ctx, req); err != nil || d.Summary.Create != files || d.Changes[files-1].Unified.IsZero() {
				return fmt.Errorf("diff: %v", err)
			}
			return nil
		}},
	}
	for _, op := range ops {
		b.Run(fmt.Sprintf("%s/%d", op.name, files), func(b *testing.B) {
			b.ReportAllocs()
			var took, one, four time.Duration
			for b.Loop() {
				b.StopTimer()
				removeAll(b, filepath.Join(env.CacheDir(), "load"), env.StateDir())
				one += timed(func() { hashTree(b, modules) })
				four += timed(func() { readHash(modules, 4) })
				e := newEngine()
				b.StartTimer()
				start := time.Now()
				if err := op.run(e); err != nil {
					b.Fatal(err)
				}
				took += time.Since(start)
			}
			b.ReportMetric(float64(took)/float64(one), "x-sha256sum")
			b.ReportMetric(float64(took)/float64(four), "x-floor")
		})
	}
}

// timed is how long fn takes.
func timed(fn func()) time.Duration {
	start := time.Now()
	fn()
	return time.Since(start)
}
