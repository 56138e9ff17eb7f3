package engine_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/targets"
)

// localRegistryEngine is an engine on a fresh environment whose default
// registry is the local registry in dir (created when create is true).
func localRegistryEngine(b *testing.B, dir string, create bool) *engine.Engine {
	b.Helper()
	e := engine.New(testEnv(b), targets.NewSet())
	var err error
	if create {
		_, err = e.RegistryInit(context.Background(), dir, "bench", true)
	} else {
		_, err = e.RegistryAdd(context.Background(), "bench", dir, true)
	}
	if err != nil {
		b.Fatal(err)
	}
	return e
}

// BenchmarkInstall100Local installs 100 packages (each one skill, the odd
// ones depending on the even ones) from a real local registry in a temp
// folder, published as .aam archives by `publish`, into a fresh repo:
// registry reads, checksum checks, .aam extraction, resolution, cache,
// lockfile, agentpack.yaml edits and the deploy.
func BenchmarkInstall100Local(b *testing.B) {
	ctx := context.Background()
	regDir := filepath.Join(b.TempDir(), "registry")
	pub := localRegistryEngine(b, regDir, true)
	src := b.TempDir()
	var specs []string
	for i := 0; i < 100; i++ {
		name, skill := fmt.Sprintf("@bench/p%03d", i), fmt.Sprintf("s%03d", i)
		deps := ""
		if i%2 == 1 {
			deps = fmt.Sprintf("dependencies:\n  \"@bench/p%03d\": ^1.0.0\n", i-1)
		}
		dir := filepath.Join(src, skill)
		mustWrite(b, filepath.Join(dir, "aam.yaml"), fmt.Sprintf("name: %q\nversion: 1.0.0\ndescription: Bench package %d.\n%sartifacts:\n  skills:\n    - name: %s\n      path: skills/%s\n      description: Skill %d.\n",
			name, i, deps, skill, skill, i))
		mustWrite(b, filepath.Join(dir, "skills", skill, "SKILL.md"), fmt.Sprintf("---\nname: %s\ndescription: Skill %d.\n---\nBody of skill %d.\n", skill, i, i))
		if _, err := pub.Publish(ctx, dir, "", ""); err != nil {
			b.Fatal(err)
		}
		specs = append(specs, name)
	}
	for b.Loop() {
		b.StopTimer()
		e := localRegistryEngine(b, regDir, false)
		repo := writeRepo(b, map[string]string{"agentpack.yaml": pkgManifest})
		b.StartTimer()
		out, _, err := e.Install(ctx, engine.Request{Repo: repo}, engine.InstallOptions{Specs: specs})
		if err != nil || len(out.Installed) != 100 || len(out.Failed) != 0 || out.Deploy == nil || !out.Deploy.Applied {
			b.Fatalf("%v %+v", err, out)
		}
	}
}

// BenchmarkSearch10k runs `search` over a local registry of 10,000
// packages: loading the settings, reading and parsing index.yaml, scoring
// every package and ranking the hits. The index is written directly (in
// AAM's layout): search reads nothing else, and publishing 10,000
// packages one by one would only slow the set-up.
func BenchmarkSearch10k(b *testing.B) {
	regDir := filepath.Join(b.TempDir(), "registry")
	e := localRegistryEngine(b, regDir, true)
	types := []string{"[skills]", "[agents]", "[prompts, instructions]", "[commands]", "[skills, agents]"}
	words := []string{"review", "lint", "test", "deploy", "docs", "python", "go", "security"}
	var idx strings.Builder
	idx.WriteString("packages:\n")
	for i := 0; i < 10000; i++ {
		w := words[i%len(words)]
		fmt.Fprintf(&idx, "  - name: \"@team%02d/%s-kit-%05d\"\n    description: Helpers for %s work, package %d.\n    latest: 1.%d.0\n"+
			"    keywords: [%s, %s]\n    artifact_types: %s\n    updated_at: \"2026-01-02T03:04:05Z\"\n",
			i%50, w, i, words[(i/8)%len(words)], i, i%7, w, words[(i+3)%len(words)], types[i%len(types)])
	}
	mustWrite(b, filepath.Join(regDir, "index.yaml"), idx.String())
	ctx := context.Background()
	// "review" matches 3,442 packages; "securty" (a typo) matches none, so
	// search also computes suggestions over every name.
	for _, q := range []struct {
		name, query, typ string
		total            int
	}{{"hits", "review", "", 3442}, {"typo", "securty", "skill", 0}} {
		b.Run(q.name, func(b *testing.B) {
			for b.Loop() {
				out, _, err := e.Search(ctx, engine.Request{Repo: b.TempDir()}, q.query, q.typ, 10, "")
				if err != nil || out.Total != q.total || len(out.Results) != min(q.total, 10) || (q.total == 0) != (len(out.Suggestions) > 0) {
					b.Fatalf("%v %+v", err, out)
				}
			}
		})
	}
}
