// Package mcpcheck starts (or connects to) one MCP server as a client
// would, runs the handshake and lists its tools, with a timeout: `doctor
// --mcp` uses it to catch broken server definitions before an IDE does.
// It reads no files and writes nothing.
package mcpcheck

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/agentpack/agentpack/engine/module"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Result statuses.
const (
	OK     = "ok"
	Failed = "failed"
)

// Result is what checking one server found. Reason is set when it failed,
// and never holds the value of an environment variable.
type Result struct {
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
	Tools  int    `json:"tools"`
}

// Options are the knobs of [Check].
type Options struct {
	// Timeout bounds the whole check (start, handshake, tools/list).
	Timeout time.Duration
	// LookupEnv resolves ${VAR} references (os.LookupEnv when nil).
	LookupEnv func(string) (string, bool)
	// Version is reported to the server as the client's version.
	Version string
}

func failed(format string, args ...any) Result {
	return Result{Status: Failed, Reason: fmt.Sprintf(format, args...)}
}

// Check runs the server s defines: for stdio it starts the command, for
// http it connects to the url; then initialize and tools/list.
func Check(ctx context.Context, s *module.MCPServer, opt Options) Result {
	lookup := opt.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	if opt.Timeout <= 0 {
		opt.Timeout = 10 * time.Second
	}
	var missing []string
	expand := func(v string) string {
		return module.MapRefs(v, func(name string) string {
			val, ok := lookup(name)
			if !ok {
				missing = append(missing, name)
			}
			return val
		})
	}
	var transport mcp.Transport
	if s.Transport == "http" {
		u := expand(s.URL)
		headers := http.Header{}
		for k, v := range s.Headers {
			headers.Set(k, expand(v))
		}
		if r := missingEnv(missing); r != nil {
			return *r
		}
		pu, err := url.Parse(u)
		if err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
			return failed("bad URL %q: want http(s)://host/…", s.URL)
		}
		transport = &mcp.StreamableClientTransport{Endpoint: u, MaxRetries: -1, DisableStandaloneSSE: true,
			HTTPClient: &http.Client{Timeout: opt.Timeout, Transport: headerTransport{headers}}}
	} else {
		command := expand(s.Command)
		args := make([]string, len(s.Args))
		for i, a := range s.Args {
			args[i] = expand(a)
		}
		env := os.Environ()
		keys := make([]string, 0, len(s.Env))
		for k := range s.Env {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			env = append(env, k+"="+expand(s.Env[k]))
		}
		for _, v := range s.EnvVars {
			if _, ok := lookup(v); !ok {
				missing = append(missing, v)
			}
		}
		if r := missingEnv(missing); r != nil {
			return *r
		}
		path, err := exec.LookPath(command)
		if err != nil {
			return failed("command not found: %s", command)
		}
		cmd := exec.Command(path, args...)
		cmd.Env = env
		if s.Cwd != "" {
			cmd.Dir = filepath.Clean(s.Cwd)
		}
		transport = &mcp.CommandTransport{Command: cmd, TerminateDuration: time.Second}
	}
	ctx, cancel := context.WithTimeout(ctx, opt.Timeout)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "agentpack-doctor", Version: opt.Version}, nil)
	cs, err := c.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: "2025-06-18"})
	if err != nil {
		return failed("handshake error: %s", short(ctx, err))
	}
	defer cs.Close()
	n := 0
	var cursor string
	for {
		res, err := cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			return failed("tools/list failed: %s", short(ctx, err))
		}
		n += len(res.Tools)
		if res.NextCursor == "" || res.NextCursor == cursor {
			break
		}
		cursor = res.NextCursor
	}
	return Result{Status: OK, Tools: n}
}

func missingEnv(names []string) *Result {
	if len(names) == 0 {
		return nil
	}
	sort.Strings(names)
	r := failed("missing env var %s", strings.Join(compact(names), ", "))
	return &r
}

func compact(s []string) []string {
	out := s[:0]
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// short is an error without the noise of wrapped transports, and says so
// when the timeout ran out.
func short(ctx context.Context, err error) string {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return "no answer before the timeout"
	}
	msg := err.Error()
	if len(msg) > 300 {
		msg = msg[:300] + "…"
	}
	return msg
}

// headerTransport adds the server's headers to every request.
type headerTransport struct{ h http.Header }

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.h {
		r.Header[k] = v
	}
	return http.DefaultTransport.RoundTrip(r)
}
