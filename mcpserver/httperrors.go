package mcpserver

import (
	"bytes"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// cleanHTTPErrors gives the streamable HTTP transport the error answers the
// stdio gate gives: it rewrites every JSON-RPC error response the SDK sends
// (a request before initialize and a protocolVersion that is no string are
// answered with code 0 and Go type names) through [cleanRPCError], in
// application/json bodies and in each `data:` line of an event stream.
// Everything else passes through unchanged, and streams stay streams.
func cleanHTTPErrors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cw := &rpcErrorWriter{ResponseWriter: w}
		defer cw.finish()
		next.ServeHTTP(cw, r)
	})
}

// rpcErrorWriter is the ResponseWriter of [cleanHTTPErrors].
type rpcErrorWriter struct {
	http.ResponseWriter
	decided, sse, json, wroteHeader bool
	// line is the unfinished line of an event stream; body the whole of a
	// JSON answer (written when the handler returns).
	line []byte
	body bytes.Buffer
	code int
}

func (w *rpcErrorWriter) decide() {
	if w.decided {
		return
	}
	w.decided = true
	ct := strings.ToLower(w.Header().Get("Content-Type"))
	w.sse = strings.HasPrefix(ct, "text/event-stream")
	w.json = strings.HasPrefix(ct, "application/json")
	if w.sse || w.json {
		w.Header().Del("Content-Length") // a cleaned answer has another length
	}
}

// WriteHeader implements http.ResponseWriter; a JSON answer's status waits
// for its body.
func (w *rpcErrorWriter) WriteHeader(code int) {
	w.decide()
	if w.json {
		w.code = code
		return
	}
	w.wroteHeader = true
	w.ResponseWriter.WriteHeader(code)
}

// Write implements http.ResponseWriter.
func (w *rpcErrorWriter) Write(p []byte) (int, error) {
	w.decide()
	switch {
	case w.json:
		return w.body.Write(p)
	case w.sse:
		w.line = append(w.line, p...)
		for {
			i := bytes.IndexByte(w.line, '\n')
			if i < 0 {
				break
			}
			if _, err := w.ResponseWriter.Write(cleanSSELine(w.line[:i+1])); err != nil {
				return 0, err
			}
			w.line = w.line[i+1:]
		}
		return len(p), nil
	}
	return w.ResponseWriter.Write(p)
}

// Flush implements http.Flusher (event streams are flushed per event).
func (w *rpcErrorWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (w *rpcErrorWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// finish writes a buffered JSON answer, cleaned, and what is left of a
// stream.
func (w *rpcErrorWriter) finish() {
	switch {
	case w.json:
		out := w.body.Bytes()
		if msg, err := jsonrpc.DecodeMessage(bytes.TrimSpace(out)); err == nil {
			if resp, ok := msg.(*jsonrpc.Response); ok {
				out = cleanResponse(resp, out)
			}
		}
		if w.code != 0 {
			w.ResponseWriter.WriteHeader(w.code)
		}
		_, _ = w.ResponseWriter.Write(out)
	case w.sse && len(w.line) > 0:
		_, _ = w.ResponseWriter.Write(cleanSSELine(w.line))
	}
}

// cleanSSELine cleans the JSON-RPC error response of one `data:` line.
func cleanSSELine(line []byte) []byte {
	const prefix = "data: "
	if !bytes.HasPrefix(line, []byte(prefix)) {
		return line
	}
	payload := bytes.TrimSpace(line[len(prefix):])
	msg, err := jsonrpc.DecodeMessage(payload)
	if err != nil {
		return line
	}
	resp, ok := msg.(*jsonrpc.Response)
	if !ok {
		return line
	}
	out := cleanResponse(resp, payload)
	if bytes.Equal(out, payload) {
		return line
	}
	return append([]byte(prefix), out...) // cleanResponse ends it with \n
}
