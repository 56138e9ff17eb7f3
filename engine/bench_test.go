package engine_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/targets"
)

// benchRepo generates a repo of skills × files per skill, codex project scope.
func benchRepo(b testing.TB, skills, files int) string {
	b.Helper()
	repo := filepath.Join(b.TempDir(), "repo")
	var m strings.Builder
	m.WriteString("version: 1\nprofiles: {default: {include_tags: [base]}}\ntargets: {codex: {scope: project}}\nmodules:\n")
	for i := 0; i < skills; i++ {
		dir := filepath.Join(repo, "modules", fmt.Sprintf("s%04d", i))
		if err := os.MkdirAll(filepath.Join(dir, "ref"), 0o755); err != nil {
			b.Fatal(err)
		}
		mustWrite(b, filepath.Join(dir, "SKILL.md"), fmt.Sprintf("---\nname: s%04d\ndescription: skill %d\n---\nbody %d\n", i, i, i))
		for f := 1; f < files; f++ {
			mustWrite(b, filepath.Join(dir, "ref", fmt.Sprintf("f%02d.md", f)), strings.Repeat(fmt.Sprintf("line %d of file %d\n", f, i), 40))
		}
		fmt.Fprintf(&m, "  - {id: \"skill:s%04d\", type: skill, tags: [base], source: {local_path: {path: modules/s%04d}}}\n", i, i)
	}
	mustWrite(b, filepath.Join(repo, "agentpack.yaml"), m.String())
	return repo
}

// BenchmarkPlan10k plans 1,000 skills × 10 files (10,000 files) against an
// empty project. Compare with BenchmarkReadHash10k, the floor.
func BenchmarkPlan10k(b *testing.B) {
	env := testEnv(b)
	repo := benchRepo(b, 1000, 10)
	e := engine.New(env, targets.NewSet())
	b.ResetTimer()
	for b.Loop() {
		_, p, err := e.Plan(context.Background(), engine.Request{Repo: repo})
		if err != nil {
			b.Fatal(err)
		}
		if p.Summary.Create != 10000 {
			b.Fatalf("want 10000 creates, got %d", p.Summary.Create)
		}
	}
}

// BenchmarkReadHash10k finds (one directory walk), reads and hashes the same
// 10,000 files in parallel: the floor plan is measured against.
func BenchmarkReadHash10k(b *testing.B) {
	repo := benchRepo(b, 1000, 10)
	b.ResetTimer()
	for b.Loop() {
		readHash(filepath.Join(repo, "modules"), 4)
	}
}

// readHash finds the files below dir with one directory walk and reads and
// hashes them on the given number of goroutines.
func readHash(dir string, goroutines int) {
	var paths []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			paths = append(paths, p)
		}
		return nil
	})
	var wg sync.WaitGroup
	ch := make(chan string)
	for w := 0; w < goroutines; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range ch {
				data, _ := os.ReadFile(p)
				_ = sha256.Sum256(data)
			}
		}()
	}
	for _, p := range paths {
		ch <- p
	}
	close(ch)
	wg.Wait()
}

// BenchmarkDeploy10k deploys 10,000 files into an empty project.
func BenchmarkDeploy10k(b *testing.B) {
	repo := benchRepo(b, 1000, 10)
	for b.Loop() {
		b.StopTimer()
		e := engine.New(testEnv(b), targets.NewSet())
		b.StartTimer()
		if _, _, err := e.Deploy(context.Background(), engine.Request{Repo: repo}, true, engine.ApplyOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRollback10k rolls back a deploy of 10,000 files.
func BenchmarkRollback10k(b *testing.B) {
	repo := benchRepo(b, 1000, 10)
	for b.Loop() {
		b.StopTimer()
		e := engine.New(testEnv(b), targets.NewSet())
		if _, _, err := e.Deploy(context.Background(), engine.Request{Repo: repo}, true, engine.ApplyOptions{}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, _, err := e.Rollback(context.Background(), engine.RollbackOptions{Last: true}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStatus10k runs status over 10,000 unchanged managed files.
func BenchmarkStatus10k(b *testing.B) {
	env := testEnv(b)
	repo := benchRepo(b, 1000, 10)
	e := engine.New(env, targets.NewSet())
	if _, _, err := e.Deploy(context.Background(), engine.Request{Repo: repo}, true, engine.ApplyOptions{}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		_, s, err := e.Status(context.Background(), engine.Request{Repo: repo}, nil)
		if err != nil {
			b.Fatal(err)
		}
		if len(s.Drift) != 0 {
			b.Fatalf("unexpected drift: %d", len(s.Drift))
		}
	}
}
