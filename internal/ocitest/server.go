// Package ocitest runs an in-process OCI registry for tests
// (go-containerregistry's registry), optionally behind basic auth or a
// GHCR-style token challenge. It is imported by tests only.
package ocitest

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"

	ggcr "github.com/google/go-containerregistry/pkg/registry"
)

// Auth is how a [Server] challenges clients.
type Auth int

// The challenges a Server can make.
const (
	// None: anonymous pull and push.
	None Auth = iota
	// Basic: 401 with a Basic challenge; only User:Password passes.
	Basic
	// Token: 401 with a Bearer challenge whose realm is /token on the same
	// server, which issues tokens for User:Password only (as GHCR does for a
	// private package).
	Token
)

// The one account a Server with auth accepts.
const (
	User     = "alice"
	Password = "s3cret-pass-word"
)

// Server is a running test registry.
type Server struct {
	// Host is its 127.0.0.1:port.
	Host string
	// Requests counts every HTTP request it received.
	Requests atomic.Int64
	// CorruptBlobs flips the first byte of every blob it serves.
	CorruptBlobs atomic.Bool
	// FailWith, when non-zero, answers every request with that status.
	FailWith atomic.Int64

	srv    *httptest.Server
	mu     sync.Mutex
	tokens map[string]bool
}

// Start runs a registry with the given auth until Close.
func Start(auth Auth) *Server {
	s := &Server{tokens: map[string]bool{}}
	inner := ggcr.New(ggcr.Logger(log.New(io.Discard, "", 0)))
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		s.Requests.Add(1)
		if code := s.FailWith.Load(); code != 0 {
			w.WriteHeader(int(code))
			return
		}
		if !s.authorized(auth, w, req) {
			return
		}
		if s.CorruptBlobs.Load() && req.Method == http.MethodGet && strings.Contains(req.URL.Path, "/blobs/") {
			inner.ServeHTTP(&corruptWriter{ResponseWriter: w}, req)
			return
		}
		inner.ServeHTTP(w, req)
	}))
	s.Host = s.srv.Listener.Addr().String()
	return s
}

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// authorized answers the challenge (and the token endpoint) and reports
// whether req may reach the registry.
func (s *Server) authorized(auth Auth, w http.ResponseWriter, req *http.Request) bool {
	switch auth {
	case Basic:
		if u, p, ok := req.BasicAuth(); !ok || u != User || p != Password {
			w.Header().Set("WWW-Authenticate", `Basic realm="ocitest"`)
			w.WriteHeader(http.StatusUnauthorized)
			return false
		}
	case Token:
		if req.URL.Path == "/token" {
			s.issueToken(w, req)
			return false
		}
		tok, _ := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
		s.mu.Lock()
		ok := s.tokens[tok]
		s.mu.Unlock()
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="http://`+req.Host+`/token",service="ocitest"`)
			w.WriteHeader(http.StatusUnauthorized)
			return false
		}
	}
	return true
}

// issueToken answers the token endpoint: a fresh token for valid basic
// credentials, 401 otherwise (anonymous included).
func (s *Server) issueToken(w http.ResponseWriter, req *http.Request) {
	if u, p, ok := req.BasicAuth(); !ok || u == "" || p != Password {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`))
		return
	}
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	tok := hex.EncodeToString(b)
	s.mu.Lock()
	s.tokens[tok] = true
	s.mu.Unlock()
	_ = json.NewEncoder(w).Encode(map[string]string{"token": tok})
}

// corruptWriter flips the first byte of a body.
type corruptWriter struct {
	http.ResponseWriter
	done bool
}

func (c *corruptWriter) Write(b []byte) (int, error) {
	if !c.done && len(b) > 0 {
		c.done = true
		b = append([]byte{b[0] ^ 0xff}, b[1:]...)
	}
	return c.ResponseWriter.Write(b)
}
