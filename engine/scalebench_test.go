package engine_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/internal/envelope"
)

// benchSizes is how many files BenchmarkScale runs at: 1,000 and 10,000,
// or what AGENTPACK_BENCH_SIZES lists (e.g. "100000"; generating 100k
// files takes a while and about 1 GB of disk with its deployed copy).
func benchSizes(b *testing.B) []int {
	list := os.Getenv("AGENTPACK_BENCH_SIZES")
	if list == "" {
		return []int{1000, 10000}
	}
	var sizes []int
	for _, s := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 10 {
			b.Fatalf("AGENTPACK_BENCH_SIZES: %q is not a file count of at least 10", s)
		}
		sizes = append(sizes, n)
	}
	return sizes
}

// BenchmarkScale runs what the CLI runs (engine use cases with the source
// cache on) at each size, with allocations, beside its floor measured in
// the same run: floor-sha256 reads and hashes every source file on one
// goroutine, as sha256sum does. Compare ns/op of each row with the floor
// of its size; bench/run.sh does the same with whole processes.
//
//	go test -run '^$' -bench Scale -benchmem ./engine/
//	AGENTPACK_BENCH_SIZES=100000 go test -run '^$' -bench Scale -benchmem -benchtime 3x ./engine/
func BenchmarkScale(b *testing.B) {
	for _, files := range benchSizes(b) {
		b.Run(strconv.Itoa(files), func(b *testing.B) {
			env, req, newEngine := cacheBench(b, files)
			ctx := context.Background()
			loadCache := filepath.Join(env.AgentpackHome, "cache", "load")
			statCache := filepath.Join(env.AgentpackHome, "state", "statcache")
			b.Run("floor-sha256", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					hashTree(b, filepath.Join(req.Repo, "modules"))
				}
			})
			b.Run("plan-cold", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					b.StopTimer()
					removeAll(b, loadCache, statCache)
					b.StartTimer()
					if _, p, err := newEngine().Plan(ctx, req); err != nil || p.Summary.Create != files {
						b.Fatal(err)
					}
				}
			})
			b.Run("diff-cold", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					b.StopTimer()
					removeAll(b, loadCache, statCache)
					b.StartTimer()
					diffJSON(b, newEngine(), req, files, 0)
				}
			})
			deployed := false
			b.Run("deploy-cold", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					b.StopTimer()
					if deployed {
						if _, _, err := newEngine().Rollback(ctx, engine.RollbackOptions{Last: true}); err != nil {
							b.Fatal(err)
						}
					}
					b.StartTimer()
					if _, d, err := newEngine().Deploy(ctx, req, true, engine.ApplyOptions{}); err != nil || !d.Applied {
						b.Fatal(err)
					}
					deployed = true
				}
			})
			if !deployed {
				return // -bench picked no deploy: nothing below has a tree to look at
			}
			// The first status after a deploy (the usual order at a
			// terminal): it computes what later ones answer from.
			b.Run("status-after-deploy", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					b.StopTimer()
					if _, _, err := newEngine().Rollback(ctx, engine.RollbackOptions{Last: true}); err != nil {
						b.Fatal(err)
					}
					if _, _, err := newEngine().Deploy(ctx, req, true, engine.ApplyOptions{}); err != nil {
						b.Fatal(err)
					}
					time.Sleep(300 * time.Millisecond) // a person typing the next command
					b.StartTimer()
					if _, s, err := newEngine().Status(ctx, req, nil); err != nil || len(s.Drift) != 0 {
						b.Fatal(err)
					}
				}
			})
			time.Sleep(150 * time.Millisecond) // past the racy window, so the next load is cached
			if _, _, err := newEngine().Plan(ctx, req); err != nil {
				b.Fatal(err)
			}
			b.Run("plan", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, p, err := newEngine().Plan(ctx, req); err != nil || len(p.Changes) != 0 {
						b.Fatal(err)
					}
				}
			})
			b.Run("status", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, s, err := newEngine().Status(ctx, req, nil); err != nil || len(s.Drift) != 0 {
						b.Fatal(err)
					}
				}
			})
			b.Run("diff", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, _, err := newEngine().Diff(ctx, req); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("deploy-noop", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, d, err := newEngine().Deploy(ctx, req, true, engine.ApplyOptions{}); err != nil || d.Applied {
						b.Fatal(err)
					}
				}
			})
			b.Run("rollback", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, _, err := newEngine().Rollback(ctx, engine.RollbackOptions{Last: true}); err != nil {
						b.Fatal(err)
					}
					b.StopTimer()
					if _, _, err := newEngine().Deploy(ctx, req, true, engine.ApplyOptions{}); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
				}
			})
			// A plan after a line is added to one of a skill's files (a
			// person typing the next command): the cached state is
			// patched for it, not loaded again. It leaves that file edited.
			edited := filepath.Join(req.Repo, "modules", "s0000", "ref", "f02.md")
			b.Run("plan-after-edit", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					b.StopTimer()
					f, err := os.OpenFile(edited, os.O_APPEND|os.O_WRONLY, 0)
					if err != nil {
						b.Fatal(err)
					}
					_, err = f.WriteString("one more line\n")
					if err := errors.Join(err, f.Close()); err != nil {
						b.Fatal(err)
					}
					time.Sleep(150 * time.Millisecond)
					b.StartTimer()
					if _, p, err := newEngine().Plan(ctx, req); err != nil || p.Summary.Update == 0 {
						b.Fatal(err)
					}
				}
			})
			// Last, as it leaves the sources edited: one file in ten of
			// the deployed tree changed, shown with nothing cached, and
			// the file plan-after-edit left edited.
			editSources(b, filepath.Join(req.Repo, "modules"))
			time.Sleep(150 * time.Millisecond) // past the racy window of the edits
			b.Run("diff-cold-updates", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					b.StopTimer()
					removeAll(b, loadCache, filepath.Join(env.AgentpackHome, "cache", "answers"))
					b.StartTimer()
					diffJSON(b, newEngine(), req, 0, files/10+1)
				}
			})
		})
	}
}

// diffJSON runs a diff and writes its --json envelope to nowhere (the
// diff of a created file is made only when it is written), checking it
// found creates and updates.
func diffJSON(b *testing.B, e *engine.Engine, req engine.Request, creates, updates int) {
	st, d, err := e.Diff(context.Background(), req)
	if err != nil || d.Summary.Create != creates || d.Summary.Update != updates {
		b.Fatalf("diff: %v, %+v", err, d.Summary)
	}
	if err := envelope.New("diff", "diff").Succeed(d, st.Warnings).Encode(io.Discard); err != nil {
		b.Fatal(err)
	}
}

// editSources changes a line of one file of each skill (its ref/f01.md):
// one file in ten of benchRepo's.
func editSources(b *testing.B, dir string) {
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Name() != "f01.md" {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		lines := strings.SplitAfter(string(data), "\n")
		lines[len(lines)/2] = "edited line\n"
		return os.WriteFile(p, []byte(strings.Join(lines, "")), 0o644)
	})
	if err != nil {
		b.Fatal(err)
	}
}

// hashTree reads and hashes every file under dir, one after another.
func hashTree(b *testing.B, dir string) {
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		_ = sha256.Sum256(data)
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
}

func removeAll(b *testing.B, paths ...string) {
	for _, p := range paths {
		if err := os.RemoveAll(p); err != nil {
			b.Fatal(err)
		}
	}
}
