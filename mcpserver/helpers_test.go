package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/schemas/schematest"
	"github.com/agentpack/agentpack/targets"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var update = flag.Bool("update", false, "rewrite tool-schema snapshots and JSON-RPC goldens")

func TestMain(m *testing.M) {
	code := m.Run()
	removeBinary()
	os.Exit(code)
}

// moduleRoot is the repository root (this package's parent folder).
func moduleRoot(t testing.TB) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(file))
}

// testEnv is a copy of the quickstart fixture with HOME, CODEX_HOME,
// AGENTPACK_HOME and the project in temp folders.
type testEnv struct {
	Env       engine.Env
	Repo      string
	Home      string
	CodexHome string
	APHome    string
	Project   string
}

func newTestEnv(t testing.TB) *testEnv {
	t.Helper()
	dir := t.TempDir()
	te := &testEnv{Repo: filepath.Join(dir, "repo"), Home: filepath.Join(dir, "home"), Project: filepath.Join(dir, "project")}
	te.CodexHome = filepath.Join(te.Home, ".codex")
	te.APHome = filepath.Join(te.Home, ".agentpack")
	copyDir(t, filepath.Join(moduleRoot(t), "fixtures", "quickstart"), te.Repo)
	for _, d := range []string{te.CodexHome, te.APHome, filepath.Join(te.Project, ".git")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	te.Env = engine.Env{Home: te.Home, AgentpackHome: te.APHome, CodexHome: te.CodexHome, Cwd: te.Project}
	return te
}

func copyDir(t testing.TB, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fi, _ := d.Info()
		return os.WriteFile(dst, data, fi.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
}

// server builds a server on te with --repo te.Repo; opts adjust it.
func (te *testEnv) server(t testing.TB, opts ...func(*Options)) *Server {
	t.Helper()
	o := Options{Env: te.Env, Adapters: targets.NewSet(), Defaults: engine.Request{Repo: te.Repo}}
	for _, f := range opts {
		f(&o)
	}
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func allowWrite(o *Options) { o.AllowWrite = true }

// connect opens an in-memory client session pinned to version (SPEC §11:
// the Go client would try the 2026 handshake first).
func connect(t testing.TB, s *Server, version string) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := s.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := c.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	return cs
}

// decodedEnvelope is a decoded tool result envelope.
type decodedEnvelope struct {
	OK          bool           `json:"ok"`
	Command     string         `json:"command"`
	CommandID   string         `json:"command_id"`
	CommandPath []string       `json:"command_path"`
	Version     string         `json:"version"`
	Data        map[string]any `json:"data"`
	Warnings    []string       `json:"warnings"`
	Errors      []struct {
		Code    string         `json:"code"`
		Message string         `json:"message"`
		Details map[string]any `json:"details"`
	} `json:"errors"`
	raw []byte
}

func (e *decodedEnvelope) code() string {
	if len(e.Errors) == 0 {
		return ""
	}
	return e.Errors[0].Code
}

// callTool calls a tool and checks the result's shape: one text block
// holding the envelope JSON (after "[E_CODE] message" on failure),
// structuredContent equal to it, isError == !ok, and the envelope valid
// against schemas/.
func callTool(t testing.TB, cs *mcp.ClientSession, name string, args any) *decodedEnvelope {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	return checkResult(t, name, res)
}

func checkResult(t testing.TB, name string, res *mcp.CallToolResult) *decodedEnvelope {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("%s: want one content block, got %d", name, len(res.Content))
	}
	text := res.Content[0].(*mcp.TextContent).Text
	sc, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var env decodedEnvelope
	if err := json.Unmarshal(sc, &env); err != nil {
		t.Fatalf("%s: structuredContent: %v", name, err)
	}
	env.raw = sc
	body := text
	if !env.OK {
		prefix := "[" + env.code() + "] " + env.Errors[0].Message + "\n"
		if !strings.HasPrefix(text, prefix) {
			t.Fatalf("%s: failure text must start with %q, got %.200q", name, prefix, text)
		}
		body = strings.TrimPrefix(text, prefix)
	}
	if !jsonEqual(t, []byte(body), sc) {
		t.Fatalf("%s: text and structuredContent differ:\n%s\nvs\n%s", name, body, sc)
	}
	if res.IsError != !env.OK {
		t.Fatalf("%s: isError=%v but ok=%v", name, res.IsError, env.OK)
	}
	validateEnvelope(t, sc)
	return &env
}

func jsonEqual(t testing.TB, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("not JSON: %v: %.300s", err, a)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

// validateEnvelope checks doc with schematest.Validate.
func validateEnvelope(t testing.TB, doc []byte) {
	t.Helper()
	if err := schematest.Validate(doc); err != nil {
		t.Fatalf("envelope does not validate: %v\n%s", err, doc)
	}
}

// fixedClock is a settable clock for confirm-token expiry.
type fixedClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fixedClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fixedClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
