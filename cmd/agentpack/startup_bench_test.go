package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// BenchmarkStartupVersion runs the built binary's `--version`: what every
// command pays before it does anything (loading, package init, the command
// line model). cpu-ms/op is user+system time, steadier than wall time on a
// busy machine.
func BenchmarkStartupVersion(b *testing.B) {
	benchmarkSpawn(b, builtBinary(b), nil, "", "--version")
}

// BenchmarkStartupStatus runs the built binary's `status --json` on a repo
// just made by `init` and deployed: start-up and the smallest real command.
func BenchmarkStartupStatus(b *testing.B) {
	bin := builtBinary(b)
	work := b.TempDir()
	home, proj := filepath.Join(work, "home"), filepath.Join(work, "proj")
	for _, d := range []string{home, filepath.Join(proj, ".git")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			b.Fatal(err)
		}
	}
	env := append(os.Environ(), "HOME="+home, "AGENTPACK_HOME="+filepath.Join(home, ".agentpack"), "CODEX_HOME=", "NO_COLOR=1")
	for _, args := range [][]string{{"init", "--yes"}, {"deploy", "--apply", "--yes"}} {
		cmd := exec.Command(bin, args...)
		cmd.Env, cmd.Dir = env, proj
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%s: %v\n%s", args, err, out)
		}
	}
	benchmarkSpawn(b, bin, env, proj, "status", "--json")
}

func benchmarkSpawn(b *testing.B, bin string, env []string, dir string, args ...string) {
	var cpu time.Duration
	for b.Loop() {
		cmd := exec.Command(bin, args...)
		cmd.Env, cmd.Dir = env, dir
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v\n%s", err, out)
		}
		cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
}

// builtBinary builds cmd/agentpack as `go build` does for users (not the
// test binary, which links test-only packages).
func builtBinary(b *testing.B) string {
	bin := filepath.Join(b.TempDir(), "agentpack")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// BenchmarkMainVersion is `agentpack --version` in process: the command
// line model and its parse, without loading and package init.
func BenchmarkMainVersion(b *testing.B) {
	benchmarkMain(b, 0, "--version")
}

// BenchmarkMainParseStatus parses a status command line in process (status
// itself fails fast on the missing repo): the model every command builds.
func BenchmarkMainParseStatus(b *testing.B) {
	b.Setenv("HOME", b.TempDir())
	b.Setenv("AGENTPACK_HOME", "")
	benchmarkMain(b, 1, "--repo", filepath.Join(b.TempDir(), "none"), "status", "--json")
}

// BenchmarkMainFlagError is a command whose flags do not parse: the
// narrowed model fails and the whole one is built.
func BenchmarkMainFlagError(b *testing.B) {
	benchmarkMain(b, 1, "status", "--bogus")
}

func benchmarkMain(b *testing.B, want int, args ...string) {
	b.ReportAllocs()
	for b.Loop() {
		if code := Main(args, strings.NewReader(""), io.Discard, io.Discard); code != want {
			b.Fatalf("exit %d, want %d", code, want)
		}
	}
}
