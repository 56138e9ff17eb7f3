package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentpack/agentpack/internal/envelope"
)

const goldenSession = "testdata/jsonrpc/session.txtar"

// txtar is a parsed txtar archive: its comment and its files, in order.
type txtar struct {
	comment string
	names   []string
	files   map[string]string
}

func parseTxtar(data string) *txtar {
	a := &txtar{files: map[string]string{}}
	cur := ""
	var b strings.Builder
	flush := func() {
		if cur == "" {
			a.comment = b.String()
		} else {
			a.files[cur] = b.String()
		}
		b.Reset()
	}
	for _, line := range strings.SplitAfter(data, "\n") {
		if strings.HasPrefix(line, "-- ") && strings.HasSuffix(strings.TrimRight(line, "\n"), " --") {
			flush()
			cur = strings.TrimSuffix(strings.TrimPrefix(strings.TrimRight(line, "\n"), "-- "), " --")
			a.names = append(a.names, cur)
			continue
		}
		b.WriteString(line)
	}
	flush()
	return a
}

func (a *txtar) format() string {
	var b strings.Builder
	b.WriteString(a.comment)
	for _, n := range a.names {
		b.WriteString("-- " + n + " --\n")
		b.WriteString(a.files[n])
	}
	return b.String()
}

// stdioSession drives ServeStdio over pipes, one line at a time.
type stdioSession struct {
	t    testing.TB
	in   *io.PipeWriter
	out  *bufio.Reader
	done chan error
}

func startStdio(t testing.TB, ctx context.Context, s *Server) *stdioSession {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ss := &stdioSession{t: t, in: inW, out: bufio.NewReader(outR), done: make(chan error, 1)}
	go func() {
		ss.done <- s.ServeStdio(ctx, inR, outW)
		outW.Close()
	}()
	return ss
}

func (ss *stdioSession) send(line string) {
	ss.t.Helper()
	if _, err := io.WriteString(ss.in, line+"\n"); err != nil {
		ss.t.Fatal(err)
	}
}

func (ss *stdioSession) recv() string {
	ss.t.Helper()
	type res struct {
		line string
		err  error
	}
	ch := make(chan res, 1)
	go func() {
		l, err := ss.out.ReadString('\n')
		ch <- res{l, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			ss.t.Fatalf("reading a response: %v", r.err)
		}
		return strings.TrimRight(r.line, "\n")
	case <-time.After(20 * time.Second):
		ss.t.Fatal("no response within 20s")
	}
	return ""
}

// TestJSONRPCGolden replays testdata/jsonrpc/session.txtar over stdio: each
// request line in, its response line out, normalised.
func TestJSONRPCGolden(t *testing.T) {
	te := newTestEnv(t)
	s := te.server(t)
	data, err := os.ReadFile(goldenSession)
	if err != nil {
		t.Fatal(err)
	}
	a := parseTxtar(string(data))
	ss := startStdio(t, context.Background(), s)
	work := filepath.Dir(te.Repo)
	var got strings.Builder
	for _, line := range strings.Split(a.files["requests"], "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		ss.send(line)
		var msg struct {
			ID json.RawMessage `json:"id"`
		}
		if err := json.Unmarshal([]byte(line), &msg); err == nil && msg.ID == nil {
			continue // a notification has no response; a bad line gets an error
		}
		resp := ss.recv()
		var check map[string]any
		if err := json.Unmarshal([]byte(resp), &check); err != nil || check["jsonrpc"] != "2.0" {
			t.Fatalf("not a JSON-RPC line: %q", resp)
		}
		resp = strings.ReplaceAll(resp, work, "$WORK")
		resp = strings.ReplaceAll(resp, envelope.Version, "$VERSION")
		got.WriteString(resp + "\n")
	}
	ss.in.Close()
	if err := <-ss.done; err != nil {
		t.Fatalf("ServeStdio after EOF: %v", err)
	}
	if *update {
		a.files["responses"] = got.String()
		if err := os.WriteFile(goldenSession, []byte(a.format()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want := strings.Split(a.files["responses"], "\n")
	have := strings.Split(got.String(), "\n")
	for i := range max(len(want), len(have)) {
		var w, h string
		if i < len(want) {
			w = want[i]
		}
		if i < len(have) {
			h = have[i]
		}
		if w != h {
			t.Errorf("response %d differs (run with -update and review):\ngot:  %s\nwant: %s", i+1, h, w)
		}
	}
}
