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

// maxLine caps one stdin line, as [DefaultMaxBodyBytes] caps an HTTP
// body: a tool call's arguments are capped far lower (maxArgumentsBytes),
// so no request a client needs to send comes near it.
const maxLine = DefaultMaxBodyBytes

// stdioGate sits between stdin/stdout and the SDK's newline-delimited
// transport. It does what the SDK does not:
//
//   - A line that is not a single JSON-RPC message (bad JSON, a message
//     followed by more bytes, a wrong version tag, a bare number, an
//     over-long line, or a batch) would end the SDK's session. The gate
//     answers it with a JSON-RPC error (-32700 parse error, -32600 invalid
//     request; id null) and drops it, so the server keeps serving. Batches
//     are refused whole: MCP 2025-06-18 and later have none, and the SDK
//     ends the session on a malformed one.
//   - A request with "id": null would be taken for a notification and never
//     answered; MCP forbids a null id, so the gate answers -32600 (id null).
//   - The SDK answers some protocol faults with code 0 or with a message
//     naming Go types and quoting the params (see [cleanRPCError]); the
//     gate rewrites those errors on their way out.
//   - A request whose id is already used by a request not yet answered
//     would get no answer at all from the SDK; the gate answers it with
//     -32600 (id null) itself.
//   - The SDK stops writing as soon as its reader sees EOF, so a client that
//     writes its requests and closes stdin (`printf … | agentpack mcp
//     serve`) would get no responses. The gate holds EOF back until every
//     request passed on has been answered.
//
// It tracks the ids of the requests it passes on and settles each when the
// server writes the response carrying that id.
type stdioGate struct {
	r *bufio.Reader
	w io.Writer

	wmu sync.Mutex // one message per Write; serialises ours with the SDK's

	mu   sync.Mutex
	cond *sync.Cond
	// open holds the ids of the requests passed on and not yet answered.
	open map[jsonrpc.ID]bool
	// writing counts the responses taken out of open and the rejections
	// whose bytes are not written yet.
	writing int
	// rejects are the rejections queued for flushRejects.
	rejects  [][]byte
	flushing bool
	closed   bool
	eof      bool
	pending  []byte // screened bytes not yet handed to the SDK
}

func newStdioGate(r io.Reader, w io.Writer) *stdioGate {
	g := &stdioGate{r: bufio.NewReaderSize(r, 64<<10), w: w, open: map[jsonrpc.ID]bool{}}
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
	if errors.Is(readErr, errLineTooLong) {
		g.reject(jsonrpc.CodeInvalidRequest, fmt.Sprintf("request line over %d bytes", maxLine))
		return
	}
	if !json.Valid(trimmed) {
		// The SDK reads a stream of JSON values: a message followed by more
		// bytes on its line ({…}}, {…}{…}, {…}\x00) would end its session.
		var first json.RawMessage
		if json.NewDecoder(bytes.NewReader(trimmed)).Decode(&first) == nil {
			g.reject(jsonrpc.CodeParseError, "parse error: extra bytes after the JSON message; send one message per line")
		} else {
			g.reject(jsonrpc.CodeParseError, "parse error: the line is not JSON")
		}
		return
	}
	if trimmed[0] == '[' {
		g.reject(jsonrpc.CodeInvalidRequest, "invalid request: JSON-RPC batches are not supported; send one message per line")
		return
	}
	var shape map[string]json.RawMessage
	if json.Unmarshal(trimmed, &shape) == nil {
		_, m := shape["method"]
		_, r := shape["result"]
		_, e := shape["error"]
		if !m && !r && !e {
			// Neither a request nor a response: the SDK would drop it silently.
			g.reject(jsonrpc.CodeInvalidRequest, "invalid request: no method")
			return
		}
		if id, ok := shape["id"]; ok && m && string(bytes.TrimSpace(id)) == "null" {
			// The SDK would take it for a notification and never answer.
			g.reject(jsonrpc.CodeInvalidRequest, "invalid request: id must be a string or a number, not null (leave id out for a notification)")
			return
		}
	}
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
		dup := g.open[req.ID]
		g.open[req.ID] = true
		g.mu.Unlock()
		if dup {
			g.reject(jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: id %v is already used by a request in flight", req.ID.Raw()))
			return
		}
	}
	g.pending = append(append(g.pending, trimmed...), '\n')
}

// reject queues a JSON-RPC error (id null) for a line that was dropped. It
// is written by its own goroutine, so a client that is not reading stdout
// at the moment cannot stall the reading of stdin.
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
	g.mu.Lock()
	defer g.mu.Unlock()
	g.rejects = append(g.rejects, append(b, '\n'))
	g.writing++
	if !g.flushing {
		g.flushing = true
		go g.flushRejects()
	}
}

// flushRejects writes the queued rejections in order, then exits.
func (g *stdioGate) flushRejects() {
	for {
		g.mu.Lock()
		if len(g.rejects) == 0 {
			g.flushing = false
			g.mu.Unlock()
			return
		}
		b := g.rejects[0]
		g.rejects = g.rejects[1:]
		g.mu.Unlock()
		g.wmu.Lock()
		_, _ = g.w.Write(b)
		g.wmu.Unlock()
		g.mu.Lock()
		g.writing--
		g.cond.Broadcast()
		g.mu.Unlock()
	}
}

// Write implements io.Writer; the SDK writes one message per call. A
// response settles its request before its bytes go out (a client may reuse
// the id as soon as it reads them); the EOF wait also waits for the write.
func (g *stdioGate) Write(p []byte) (int, error) {
	resp, _ := jsonrpc.DecodeMessage(bytes.TrimSpace(p))
	r, ok := resp.(*jsonrpc.Response)
	out := p
	if ok {
		out = cleanResponse(r, p)
	}
	settles := ok && r.ID.IsValid()
	if settles {
		g.mu.Lock()
		delete(g.open, r.ID)
		g.writing++
		g.mu.Unlock()
	}
	g.wmu.Lock()
	n, err := g.w.Write(out)
	g.wmu.Unlock()
	if settles {
		g.mu.Lock()
		g.writing--
		g.cond.Broadcast()
		g.mu.Unlock()
	}
	if err != nil {
		return min(n, len(p)), err
	}
	return len(p), nil // out may differ from p; all of p was handled
}

// cleanResponse returns the bytes of r, an error response cleaned by
// [cleanRPCError], or p itself when there is nothing to clean.
func cleanResponse(r *jsonrpc.Response, p []byte) []byte {
	var we *jsonrpc.Error
	if r.Error == nil || !errors.As(r.Error, &we) || !cleanRPCError(we) {
		return p
	}
	b, err := jsonrpc.EncodeMessage(r)
	if err != nil {
		return p
	}
	return append(b, '\n')
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
	for (len(g.open) > 0 || g.writing > 0) && !g.closed {
		g.cond.Wait()
	}
}
