package mcpserver

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// tsSDKVersion pins the official TypeScript client the e2e test drives.
const tsSDKVersion = "1.32.2"

var (
	buildOnce sync.Once
	binDir    string
	binPath   string
	buildErr  error
)

// agentpackBinary builds cmd/agentpack once per test process.
func agentpackBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		if binDir, buildErr = os.MkdirTemp("", "agentpack-e2e-"); buildErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "agentpack")
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/agentpack")
		cmd.Dir = moduleRoot(t)
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/agentpack: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

func removeBinary() {
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
}

// processEnv is the environment of a spawned agentpack: the test's homes,
// never the real ones.
func (te *testEnv) processEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		switch strings.SplitN(kv, "=", 2)[0] {
		case "HOME", "CODEX_HOME", "AGENTPACK_HOME", "AGENTPACK_MCP_TOKEN", "AGENTPACK_FSYNC":
			continue
		}
		out = append(out, kv)
	}
	return append(out, "HOME="+te.Home, "CODEX_HOME="+te.CodexHome, "AGENTPACK_HOME="+te.APHome)
}

func (te *testEnv) command(bin string, args ...string) *exec.Cmd {
	cmd := exec.Command(bin, args...)
	cmd.Env, cmd.Dir = te.processEnv(), te.Project
	return cmd
}

// connectBinary starts `agentpack mcp serve` and connects the Go client.
func connectBinary(t testing.TB, te *testEnv, bin string, extra ...string) *mcp.ClientSession {
	t.Helper()
	cmd := te.command(bin, append([]string{"mcp", "serve", "--repo", te.Repo}, extra...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	c := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestE2EBinaryMatchesCLI checks, on the real binary, that each tool's text
// is byte for byte what the CLI prints with --json for the same inputs
// (after "[E_CODE] message" on failure).
func TestE2EBinaryMatchesCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := agentpackBinary(t)
	te := newTestEnv(t)
	cli := func(args ...string) string {
		out, _ := te.command(bin, append(args, "--json", "--repo", te.Repo)...).Output()
		return string(out)
	}
	compare := func(cs *mcp.ClientSession, tool string, args M, cliArgs ...string) {
		t.Helper()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		env := checkResult(t, tool, res)
		text := res.Content[0].(*mcp.TextContent).Text
		if !env.OK {
			text = strings.TrimPrefix(text, "["+env.code()+"] "+env.Errors[0].Message+"\n")
		}
		if want := cli(cliArgs...); text != want {
			t.Errorf("%s %v differs from `agentpack %s --json`:\nmcp:\n%s\ncli:\n%s", tool, args, strings.Join(cliArgs, " "), text, want)
		}
	}
	cs := connectBinary(t, te, bin)
	check := func() {
		compare(cs, "plan", M{}, "plan")
		compare(cs, "plan", M{"profile": "work", "target": "codex"}, "plan", "--profile", "work", "--target", "codex")
		compare(cs, "diff", M{}, "diff")
		compare(cs, "preview", M{"diff": true}, "preview", "--diff")
		compare(cs, "status", M{}, "status")
		compare(cs, "status", M{"only": []string{"missing"}}, "status", "--only", "missing")
		compare(cs, "snapshots", M{}, "snapshots")
		compare(cs, "doctor", M{}, "doctor")
		compare(cs, "explain", M{"kind": "plan"}, "explain", "plan")
		compare(cs, "plan", M{"profile": "nope"}, "plan", "--profile", "nope")
	}
	check()
	// With state on disk: deployed by the CLI, seen by the server (state is
	// read fresh on every call).
	if out, err := te.command(bin, "deploy", "--apply", "--yes", "--json", "--repo", te.Repo).CombinedOutput(); err != nil {
		t.Fatalf("cli deploy: %v\n%s", err, out)
	}
	check()
	// The write path over the binary: deploy_apply then rollback as the CLI would.
	rw := connectBinary(t, te, bin, "--allow-write")
	if env := callTool(t, rw, "rollback", M{"last": true, "yes": true}); !env.OK {
		t.Fatalf("rollback: %s", env.raw)
	}
	if exists(filepath.Join(te.Project, "AGENTS.md")) {
		t.Fatal("rollback over the binary left files")
	}
	tok := callTool(t, rw, "deploy", M{}).Data["confirm_token"]
	if env := callTool(t, rw, "deploy_apply", M{"yes": true, "confirm_token": tok}); !env.OK || !exists(filepath.Join(te.Project, "AGENTS.md")) {
		t.Fatalf("deploy_apply: %s", env.raw)
	}
}

// npmSDKDir installs the pinned TypeScript SDK once into the user cache
// (outside the repo) and returns the folder holding its node_modules.
func npmSDKDir(t testing.TB) string {
	t.Helper()
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	dir := filepath.Join(base, "agentpack-test", "npm", "sdk-"+tsSDKVersion)
	marker := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")
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
	cmd := exec.CommandContext(ctx, "npm", "install", "--no-audit", "--no-fund", "--no-save", "--prefix", tmp, "@modelcontextprotocol/sdk@"+tsSDKVersion)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm install @modelcontextprotocol/sdk@%s: %v\n%s", tsSDKVersion, err, out)
	}
	// Publish atomically; a concurrent installer may have won the race.
	if err := os.Rename(tmp, dir); err != nil && !exists(marker) {
		t.Fatalf("install the SDK into %s: %v", dir, err)
	}
	return dir
}

// TestE2ETypeScriptClient drives the real binary with the official
// TypeScript client over stdio and HTTP (testdata/e2e/client.mjs).
func TestE2ETypeScriptClient(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs node")
	}
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not on PATH; the TypeScript e2e test needs Node.js and npm", tool)
		}
	}
	bin := agentpackBinary(t)
	sdk := npmSDKDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join("testdata", "e2e", "client.mjs"))
	cmd.Env = append(os.Environ(), "AGENTPACK_BIN="+bin, "SDK_DIR="+sdk, "WORK="+t.TempDir(),
		"FIXTURE="+filepath.Join(moduleRoot(t), "fixtures", "quickstart"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node client.mjs: %v\n%s", err, out)
	}
	t.Logf("%s", bytes.TrimSpace(out))
}
