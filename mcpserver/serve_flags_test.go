package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServeRefusesGlobalDryRun: `--dry-run` is a global flag ("Show what
// would change; write nothing") that kong accepts on `mcp serve`. The
// server cannot honour it for a whole session (deploy_apply would write),
// so it refuses to start: E_INVALID_ARGUMENT on stderr, exit 1, nothing on
// stdout, nothing written.
func TestServeRefusesGlobalDryRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := agentpackBinary(t)
	te := newTestEnv(t)
	for _, args := range [][]string{
		{"mcp", "serve", "--repo", te.Repo, "--allow-write", "--dry-run"},
		{"--dry-run", "--json", "mcp", "serve", "--repo", te.Repo, "--allow-write"},
	} {
		stdout, stderr, code := runBinary(t, te, bin, stdioSessionInput, nil, args...)
		if code != 1 || stdout != "" || !strings.Contains(stderr, "E_INVALID_ARGUMENT") || !strings.Contains(stderr, "dry_run") {
			t.Errorf("%v: exit %d\nstdout:\n%s\nstderr:\n%s", args, code, stdout, stderr)
		}
	}
	if exists(filepath.Join(te.Project, "AGENTS.md")) {
		t.Fatal("`agentpack mcp serve --allow-write --dry-run` wrote files")
	}
}

// stdioSessionInput is an initialize handshake.
const stdioSessionInput = initLine + "\n" + `{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"

// runBinary runs agentpack with stdin and extra environment variables and
// returns its stdout, stderr and exit code.
func runBinary(t *testing.T, te *testEnv, bin, stdin string, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := te.command(bin, args...)
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return stdout.String(), stderr.String(), 0
	case errors.As(err, &ee):
		return stdout.String(), stderr.String(), ee.ExitCode()
	}
	t.Fatal(err)
	return "", "", 0
}

// TestServeJSONFlagKeepsStdoutJSONRPC: under the global --json flag,
// stdout still carries newline-delimited JSON-RPC only. An error that ends
// or prevents serving is reported on stderr (exit 1), never as an envelope
// on stdout.
func TestServeJSONFlagKeepsStdoutJSONRPC(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := agentpackBinary(t)
	te := newTestEnv(t)
	cmd := te.command(bin, "--json", "mcp", "serve", "--repo", te.Repo)
	cmd.Stdin = strings.NewReader(stdioSessionInput + "[]\n")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Errorf("exit: %v\n%s", err, stderr.String())
	}
	for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		var msg map[string]any
		if err := json.Unmarshal([]byte(line), &msg); err != nil || msg["jsonrpc"] != "2.0" {
			t.Fatalf("stdout line is not a JSON-RPC message: %q\nstdout:\n%s", line, stdout.String())
		}
	}
	// Failures before serving.
	for _, args := range [][]string{
		{"--dry-run"},
		{"--toolsets", "nope"},
		{"--log-file", filepath.Join(te.Home, "no", "such", "dir", "mcp.log")},
		{"--transport", "http", "--host", "0.0.0.0", "--port", "0", "--allow-write"},
	} {
		stdout, stderr, code := runBinary(t, te, bin, stdioSessionInput, nil, append([]string{"--json", "mcp", "serve", "--repo", te.Repo}, args...)...)
		if code != 1 || stdout != "" || !strings.Contains(stderr, "[E_") {
			t.Errorf("%v: exit %d\nstdout (must be empty):\n%s\nstderr:\n%s", args, code, stdout, stderr)
		}
	}
	// With --log-file the error is logged there too.
	logFile := filepath.Join(te.Home, "mcp.log")
	if _, _, code := runBinary(t, te, bin, "", nil, "--json", "mcp", "serve", "--repo", te.Repo, "--toolsets", "nope", "--log-file", logFile); code != 1 {
		t.Errorf("--toolsets nope: exit %d", code)
	}
	if b, err := os.ReadFile(logFile); err != nil || !strings.Contains(string(b), "E_INVALID_ARGUMENT") {
		t.Errorf("log file: %q %v", b, err)
	}
}

// startHTTPBinary starts `agentpack mcp serve --transport http --port 0`
// with extra flags and environment. It returns the stderr up to the
// "listening on" line and true, or all of stderr and false when the
// process exited instead; a started server is stopped at cleanup.
func startHTTPBinary(t *testing.T, te *testEnv, bin string, env []string, args ...string) (string, bool) {
	t.Helper()
	cmd := te.command(bin, append([]string{"mcp", "serve", "--repo", te.Repo, "--transport", "http", "--port", "0"}, args...)...)
	cmd.Env = append(cmd.Env, env...)
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	type result struct {
		text    string
		started bool
	}
	ch := make(chan result, 1)
	go func() {
		var b strings.Builder
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			b.WriteString(sc.Text() + "\n")
			if strings.Contains(sc.Text(), "agentpack mcp: listening on http://") {
				ch <- result{b.String(), true}
				for sc.Scan() { // keep draining
				}
				return
			}
		}
		ch <- result{b.String(), false}
	}()
	select {
	case r := <-ch:
		return r.text, r.started
	case <-time.After(60 * time.Second):
		t.Fatal("mcp serve neither listened nor exited")
	}
	return "", false
}

// TestServeAllowWriteNonLoopbackNeedsToken: a non-loopback --host has no
// DNS-rebinding protection, so a web page could reach a LAN address; with
// --allow-write and no AGENTPACK_MCP_TOKEN the server refuses to start.
// Read-only stays allowed with a warning; "localhost" is loopback.
func TestServeAllowWriteNonLoopbackNeedsToken(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := agentpackBinary(t)
	te := newTestEnv(t)
	const warning = "non-loopback address without AGENTPACK_MCP_TOKEN"

	stderr, started := startHTTPBinary(t, te, bin, nil, "--host", "0.0.0.0", "--allow-write")
	if started || !strings.Contains(stderr, "E_INVALID_ARGUMENT") || !strings.Contains(stderr, "set AGENTPACK_MCP_TOKEN") {
		t.Errorf("--allow-write on 0.0.0.0 without a token: started=%v\n%s", started, stderr)
	}
	// A blank token is no token.
	if stderr, started := startHTTPBinary(t, te, bin, []string{"AGENTPACK_MCP_TOKEN=  "}, "--host", "0.0.0.0", "--allow-write"); started {
		t.Errorf("--allow-write on 0.0.0.0 with a blank token started:\n%s", stderr)
	}
	if stderr, started := startHTTPBinary(t, te, bin, []string{"AGENTPACK_MCP_TOKEN=sekrit"}, "--host", "0.0.0.0", "--allow-write"); !started || strings.Contains(stderr, warning) {
		t.Errorf("--allow-write on 0.0.0.0 with a token: started=%v\n%s", started, stderr)
	}
	if stderr, started := startHTTPBinary(t, te, bin, nil, "--host", "0.0.0.0"); !started || !strings.Contains(stderr, warning) {
		t.Errorf("read-only on 0.0.0.0 without a token: started=%v, want the warning\n%s", started, stderr)
	}
	for _, host := range []string{"localhost", "127.0.0.1"} {
		if stderr, started := startHTTPBinary(t, te, bin, nil, "--host", host, "--allow-write"); !started || strings.Contains(stderr, warning) {
			t.Errorf("--allow-write on %s without a token: started=%v, want no warning\n%s", host, started, stderr)
		}
	}
}
