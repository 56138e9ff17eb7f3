package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// rawSession speaks newline-delimited JSON-RPC to a spawned agentpack, so
// the test sees the wire JSON itself.
type rawSession struct {
	t      *testing.T
	in     io.WriteCloser
	out    *bufio.Reader
	nextID int
}

func startRaw(t *testing.T, te *testEnv, bin string, extra ...string) *rawSession {
	t.Helper()
	cmd := te.command(bin, append([]string{"mcp", "serve", "--repo", te.Repo}, extra...)...)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		in.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("server stderr:\n%s", stderr.String())
		}
	})
	rs := &rawSession{t: t, in: in, out: bufio.NewReaderSize(out, 1<<20)}
	rs.call("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "raw", "version": "1"}})
	rs.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	return rs
}

func (rs *rawSession) send(msg any) {
	rs.t.Helper()
	b, _ := json.Marshal(msg)
	if _, err := rs.in.Write(append(b, '\n')); err != nil {
		rs.t.Fatal(err)
	}
}

// rawReply is one response: its result or error, as raw JSON.
type rawReply struct {
	Result map[string]any
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
}

// call sends one request and waits for the response with its id.
func (rs *rawSession) call(method string, params any) rawReply {
	rs.t.Helper()
	rs.nextID++
	id := rs.nextID
	rs.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	for {
		line, err := rs.out.ReadBytes('\n')
		if err != nil {
			rs.t.Fatalf("%s: reading the response: %v", method, err)
		}
		var msg struct {
			ID     *int            `json:"id"`
			Result map[string]any  `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(line, &msg); err != nil {
			rs.t.Fatalf("%s: not JSON on stdout: %q", method, line)
		}
		if msg.ID == nil || *msg.ID != id {
			continue // a notification
		}
		r := rawReply{Result: msg.Result}
		if msg.Error != nil {
			_ = json.Unmarshal(msg.Error, &r.Error)
		}
		return r
	}
}

// TestE2ESkillsOverStdio drives the built binary over stdio: the
// extension is declared, skills/list and skills/get carry the 2026 result
// fields, every listed file read back has its listed digest and size and
// the bytes the CLI's deploy wrote, traversal is refused, and --no-skills
// leaves nothing of it.
func TestE2ESkillsOverStdio(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := agentpackBinary(t)
	te := newTestEnv(t)
	skillsRepo(t, te)
	if out, err := te.command(bin, "deploy", "--apply", "--yes", "--json", "--repo", te.Repo).CombinedOutput(); err != nil {
		t.Fatalf("cli deploy: %v\n%s", err, out)
	}
	rs := startRaw(t, te, bin)

	list := rs.call("skills/list", map[string]any{})
	if list.Error != nil {
		t.Fatalf("skills/list: %+v", list.Error)
	}
	for k, want := range map[string]any{"resultType": "complete", "ttlMs": 0.0, "cacheScope": "private"} {
		if list.Result[k] != want {
			t.Errorf("skills/list %s = %v, want %v", k, list.Result[k], want)
		}
	}
	skills, _ := list.Result["skills"].([]any)
	if len(skills) != 4 {
		t.Fatalf("skills/list: %d skills: %v", len(skills), list.Result)
	}
	folders := map[string]string{"pdf-processing": "pdf", "lint": "lint", "skill_review": "review", "skill_review-copy": "review-copy"}
	files := 0
	for _, s := range skills {
		entry := s.(map[string]any)
		uri := entry["uri"].(string)
		root := strings.TrimSuffix(uri, "SKILL.md")
		folder := folders[strings.Split(strings.TrimPrefix(uri, skillScheme), "/")[0]]
		get := rs.call("skills/get", map[string]any{"uri": uri})
		if get.Error != nil || fmt.Sprint(get.Result["skill"]) != fmt.Sprint(entry) || get.Result["resultType"] != "complete" {
			t.Errorf("skills/get %s = %v %+v, want the listed entry", uri, get.Result, get.Error)
		}
		for _, r := range entry["resources"].([]any) {
			res := r.(map[string]any)
			read := rs.call("resources/read", map[string]any{"uri": res["uri"]})
			if read.Error != nil {
				t.Fatalf("read %s: %+v", res["uri"], read.Error)
			}
			c := read.Result["contents"].([]any)[0].(map[string]any)
			var data []byte
			if b, ok := c["blob"].(string); ok {
				data, _ = base64.StdEncoding.DecodeString(b)
			} else {
				data = []byte(c["text"].(string))
			}
			disk, err := os.ReadFile(filepath.Join(te.Home, ".claude", "skills", folder, filepath.FromSlash(strings.TrimPrefix(res["uri"].(string), root))))
			if err != nil || !bytes.Equal(data, disk) || sha(data) != res["digest"] || float64(len(data)) != res["size"] {
				t.Errorf("%s: read %d bytes %s, listed %v %v, deployed %q (%v)", res["uri"], len(data), sha(data), res["digest"], res["size"], disk, err)
			}
			files++
		}
	}
	if files != 10 {
		t.Errorf("read %d files, want 10", files)
	}
	for _, uri := range []string{"skill://pdf-processing/%2e%2e/lint/SKILL.md", "skill://pdf-processing/../lint/SKILL.md"} {
		if r := rs.call("resources/read", map[string]any{"uri": uri}); r.Error == nil || r.Error.Code != -32602 {
			t.Errorf("read %s: want -32602, got %v %+v", uri, r.Result, r.Error)
		}
	}
	dir := rs.call("resources/directory/read", map[string]any{"uri": "skill://pdf-processing/templates"})
	if dir.Error != nil || len(dir.Result["resources"].([]any)) != 2 {
		t.Errorf("directory read: %v %+v", dir.Result, dir.Error)
	}

	off := startRaw(t, te, bin, "--skills=false")
	if r := off.call("skills/list", map[string]any{}); r.Error == nil || r.Error.Code != -32601 {
		t.Errorf("--skills=false: skills/list = %v %+v, want -32601", r.Result, r.Error)
	}
	if r := off.call("resources/list", map[string]any{}); strings.Contains(fmt.Sprint(r.Result), "skill://") {
		t.Errorf("--skills=false lists skill resources: %v", r.Result)
	}
}
