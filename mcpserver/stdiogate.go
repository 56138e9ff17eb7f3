package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// eofGrace bounds how long the end of stdin waits for answers, so a
// request the SDK never answers cannot keep the process alive.
const eofGrace = time.Minute

// maxLine caps one stdin line (the SDK's own frame limit).
const maxLine = 16 << 20

// stdioGate sits between stdin/stdout and the SDK's newline-delimited
// transport. It does two things the SDK does not:
//
//   - A line that is not a JSON-RPC message (bad JSON, a wrong version tag,
//     a bare number, an over-long line) would end the SDK's session. The
//     gate answers it with a JSON-RPC error (-32700 parse error, -32600
//     invalid request; id null) and drops it, so the server keeps serving.
//   - The SDK stops writing as soon as its reader sees EOF, so a client that
//     writes its requests and closes stdin (`printf … | agentpack mcp
//     serve`) would get no responses. The gate holds EOF back until every
//     request read so far has been answered.
//
// It counts requests (an id and a method) in the lines it passes on and
// responses (an id, no method) in the lines the server writes.
type stdioGate struct {
	r *bufio.Reader
	w io.Writer

	wmu sync.Mutex // one message per Write; serialises ours with the SDK's

	mu       sync.Mutex
	cond     *sync.Cond
	asked    int
	answered int
	closed   bool
	eof      bool
	pending  []byte // screened bytes not yet handed to the SDK
}

func newStdioGate(r io.Reader, w io.Writer) *stdioGate {
	g := &stdioGate{r: bufio.NewReaderSize(r, 64<<10), w: w}
	g.cond = sync.NewCond(&g.mu)
	return g
}

// Read implements io.Reader: it returns screened, complete lines only.
func (g *stdioGate) Read(p []byte) (int, error) {
	for len(g.pending) == 0 {
		if g.eof {
			g.waitAnsweredFor(eofGrace)
			return 0, io.EOF
		}
		line, err := g.readLine()
		if len(bytes.TrimSpace(line)) > 0 || errors.Is(err, errLineTooLong) {
			g.screen(line, err)
		}
		if err == io.EOF {
			g.eof = true
		} else if err != nil && !errors.Is(err, errLineTooLong) {
			return 0, err
		}
	}
	n := copy(p, g.pending)
	g.pending = g.pending[n:]
	return n, nil
}

var errLineTooLong = errors.New("line too long")

// readLine reads one line without its '\n'. An over-long line is read to
// its end and dropped (errLineTooLong).
func (g *stdioGate) readLine() ([]byte, error) {
	var line []byte
	tooLong := false
	for {
		chunk, err := g.r.ReadSlice('\n')
		if !tooLong && len(line)+len(chunk) > maxLine {
			tooLong, line = true, nil
		}
		if !tooLong {
			line = append(line, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if tooLong {
			g.eof = g.eof || err == io.EOF
			return nil, errLineTooLong
		}
		return bytes.TrimSuffix(line, []byte("\n")), err
	}
}

// screen passes a JSON-RPC message on, or answers and drops anything else.
func (g *stdioGate) screen(line []byte, readErr error) {
	trimmed := bytes.TrimSpace(line)
	switch {
	case errors.Is(readErr, errLineTooLong):
		g.reject(jsonrpc.CodeInvalidRequest, fmt.Sprintf("request line over %d bytes", maxLine))
		return
	case trimmed[0] == '[': // a batch: the SDK decides; count its calls
		g.mu.Lock()
		g.asked += countIDs(trimmed, true)
		g.mu.Unlock()
	default:
		msg, err := jsonrpc.DecodeMessage(trimmed)
		if err != nil {
			if !json.Valid(trimmed) {
				g.reject(jsonrpc.CodeParseError, "parse error: the line is not JSON")
			} else {
				g.reject(jsonrpc.CodeInvalidRequest, "invalid request: "+err.Error())
			}
			return
		}
		if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
			g.mu.Lock()
			g.asked++
			g.mu.Unlock()
		}
	}
	g.pending = append(append(g.pending, trimmed...), '\n')
}

func (g *stdioGate) reject(code int64, message string) {
	type wireError struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	}
	b, _ := json.Marshal(struct {
		JSONRPC string    `json:"jsonrpc"`
		ID      any       `json:"id"`
		Error   wireError `json:"error"`
	}{"2.0", nil, wireError{code, message}})
	g.wmu.Lock()
	defer g.wmu.Unlock()
	_, _ = g.w.Write(append(b, '\n'))
}

// Write implements io.Writer; the SDK writes one message per call.
func (g *stdioGate) Write(p []byte) (int, error) {
	g.wmu.Lock()
	n, err := g.w.Write(p)
	g.wmu.Unlock()
	if answers := countIDs(p, false); answers > 0 {
		g.mu.Lock()
		g.answered += answers
		g.cond.Broadcast()
		g.mu.Unlock()
	}
	return n, err
}

// countIDs counts the calls (calls=true: an id and a method) or the
// responses (an id, no method) in one message or batch.
func countIDs(p []byte, calls bool) int {
	type msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	var batch []msg
	p = bytes.TrimSpace(p)
	if len(p) > 0 && p[0] == '[' {
		_ = json.Unmarshal(p, &batch)
	} else {
		var m msg
		if json.Unmarshal(p, &m) == nil {
			batch = []msg{m}
		}
	}
	n := 0
	for _, m := range batch {
		if len(m.ID) > 0 && string(m.ID) != "null" && (m.Method != "") == calls {
			n++
		}
	}
	return n
}

// Close releases a Read waiting for answers (the session is over).
func (g *stdioGate) Close() error {
	g.mu.Lock()
	g.closed = true
	g.cond.Broadcast()
	g.mu.Unlock()
	return nil
}

// waitAnsweredFor waits, at most d, until every request passed on has been
// answered.
func (g *stdioGate) waitAnsweredFor(d time.Duration) {
	t := time.AfterFunc(d, func() { _ = g.Close() })
	defer t.Stop()
	g.mu.Lock()
	defer g.mu.Unlock()
	for g.answered < g.asked && !g.closed {
		g.cond.Wait()
	}
}
