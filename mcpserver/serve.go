package mcpserver

import (
	"context"
	"crypto/subtle"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultMaxBodyBytes limits an HTTP request body (413 above it).
const DefaultMaxBodyBytes = 4 << 20

// shutdownGrace bounds how long an HTTP shutdown waits for idle
// connections after the calls in flight have finished (open SSE streams
// never become idle).
const shutdownGrace = 2 * time.Second

// ServeStdio serves one session over newline-delimited JSON-RPC on r and w
// until the client closes r or ctx is cancelled. On cancellation the calls
// in flight finish and are answered first; then it returns nil. Nothing
// but JSON-RPC is ever written to w.
func (s *Server) ServeStdio(ctx context.Context, r io.Reader, w io.Writer) error {
	defer s.Close()
	runCtx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	gate := newStdioGate(r, w)
	defer gate.Close()
	go func() {
		done <- s.mcp.Run(runCtx, &mcp.IOTransport{Reader: gate, Writer: nopWriteCloser{gate}})
	}()
	select {
	case err := <-done:
		if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, context.Canceled) && !errors.Is(err, mcp.ErrConnectionClosed) {
			return err
		}
		return nil
	case <-ctx.Done():
		s.log.Info("shutting down: finishing calls in flight")
		s.inflight.drain()
		// The handlers are done; wait until their responses are written too
		// (closing the session drops unwritten responses).
		gate.waitAnsweredFor(shutdownGrace)
		cancel()
		<-done
		return nil
	}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// HTTPOptions configure the streamable HTTP transport.
type HTTPOptions struct {
	// BearerToken, when set, is required as "Authorization: Bearer <token>"
	// on every request (401 otherwise).
	BearerToken string
	// MaxBodyBytes limits request bodies; 0 means [DefaultMaxBodyBytes].
	MaxBodyBytes int64
	// SessionTimeout closes a session idle that long (its id then gets
	// 404 and the client initializes again); 0 means
	// [DefaultSessionTimeout].
	SessionTimeout time.Duration
}

// DefaultSessionTimeout is how long an idle HTTP session is kept.
const DefaultSessionTimeout = 30 * time.Minute

// HTTPHandler returns the streamable HTTP handler, mounted at /mcp. The
// SDK refuses a non-loopback Host on a loopback listener (DNS rebinding)
// and bodies over the limit (413); cross-origin browser requests are
// refused (403); the bearer token is checked first (401). JSON-RPC errors
// are answered with the codes and messages of the stdio transport
// ([cleanHTTPErrors]).
func (s *Server) HTTPHandler(o HTTPOptions) http.Handler {
	if o.MaxBodyBytes == 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.SessionTimeout == 0 {
		o.SessionTimeout = DefaultSessionTimeout
	}
	var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp },
		&mcp.StreamableHTTPOptions{Logger: s.log, MaxRequestBodyBytes: o.MaxBodyBytes, SessionTimeout: o.SessionTimeout})
	h = cleanHTTPErrors(h)
	h = http.NewCrossOriginProtection().Handler(h)
	if token := strings.TrimSpace(o.BearerToken); token != "" {
		h = requireBearer(token, h)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	return mux
}

// requireBearer checks "Authorization: Bearer <token>". The scheme is
// case-insensitive (RFC 9110 §11.1); the token is compared in constant
// time.
func requireBearer(token string, next http.Handler) http.Handler {
	want := []byte(token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme, got, _ := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
		ok := strings.EqualFold(scheme, "Bearer")
		if subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), want) != 1 || !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="agentpack"`)
			http.Error(w, "unauthorized: set Authorization: Bearer $AGENTPACK_MCP_TOKEN", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// ServeHTTP serves the streamable HTTP transport on ln until ctx is
// cancelled; then it stops accepting, finishes the calls in flight and
// returns nil.
func (s *Server) ServeHTTP(ctx context.Context, ln net.Listener, o HTTPOptions) error {
	defer s.Close()
	srv := &http.Server{Handler: s.HTTPHandler(o), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	s.log.Info("shutting down: finishing calls in flight")
	s.inflight.drain()
	shCtx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(shCtx); err != nil {
		_ = srv.Close()
	}
	<-done
	return nil
}
