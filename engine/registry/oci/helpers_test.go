package oci

import (
	"context"
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
	"testing"
	"time"

	ggcr "github.com/google/go-containerregistry/pkg/registry"

	"github.com/agentpack/agentpack/engine/registry"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
)

// authMode is how a test registry challenges clients.
type authMode int

const (
	authNone authMode = iota
	authBasic
	authToken // GHCR-style: 401 Bearer, then a token endpoint behind basic auth
)

const (
	testUser = "alice"
	testPass = "s3cret-pass-word"
)

// testRegistry is an in-process OCI registry (go-containerregistry) with
// an optional basic or token auth wrapper.
type testRegistry struct {
	srv      *httptest.Server
	host     string
	requests atomic.Int64
	// corruptBlobs flips a byte in every blob body served.
	corruptBlobs atomic.Bool
	// failWith, when non-zero, answers every request with this status.
	failWith atomic.Int64

	mu     sync.Mutex
	tokens map[string]bool
}

func startRegistry(t *testing.T, mode authMode) *testRegistry {
	t.Helper()
	tr := &testRegistry{tokens: map[string]bool{}}
	inner := ggcr.New(ggcr.Logger(log.New(io.Discard, "", 0)))
	tr.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		tr.requests.Add(1)
		if code := tr.failWith.Load(); code != 0 {
			w.WriteHeader(int(code))
			return
		}
		switch mode {
		case authBasic:
			if u, p, ok := req.BasicAuth(); !ok || u != testUser || p != testPass {
				w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
		case authToken:
			if req.URL.Path == "/token" {
				tr.issueToken(w, req)
				return
			}
			tok, _ := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
			tr.mu.Lock()
			ok := tr.tokens[tok]
			tr.mu.Unlock()
			if !ok {
				w.Header().Set("WWW-Authenticate", `Bearer realm="http://`+req.Host+`/token",service="test"`)
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
		}
		if tr.corruptBlobs.Load() && req.Method == http.MethodGet && strings.Contains(req.URL.Path, "/blobs/") {
			inner.ServeHTTP(&corruptWriter{ResponseWriter: w}, req)
			return
		}
		inner.ServeHTTP(w, req)
	}))
	t.Cleanup(tr.srv.Close)
	tr.host = tr.srv.Listener.Addr().String()
	return tr
}

// issueToken answers the token endpoint: a token only for valid basic
// credentials (anonymous requests are refused, as for a private package).
func (tr *testRegistry) issueToken(w http.ResponseWriter, req *http.Request) {
	if u, p, ok := req.BasicAuth(); !ok || u == "" || p != testPass {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`))
		return
	}
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	tok := hex.EncodeToString(b)
	tr.mu.Lock()
	tr.tokens[tok] = true
	tr.mu.Unlock()
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

// env is a fake environment for one test.
type env map[string]string

func (e env) get(k string) string { return e[k] }

// open returns a Registry for url with a test environment: HOME in a temp
// dir, fast retries.
func open(t *testing.T, url string, e env) *Registry {
	t.Helper()
	if e == nil {
		e = env{}
	}
	if _, ok := e["HOME"]; !ok {
		e["HOME"] = t.TempDir()
	}
	r, err := New("test", url, fsys.NewRealSystem(fsys.RealSystemOptions{}), Options{
		Getenv: e.get, MinBackoff: time.Millisecond, Timeout: 10 * time.Second,
		Now: func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) },
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// testMeta is a package's metadata with its fake archive bytes (the OCI
// layer never looks inside the archive).
func testMeta(name, version string) (Meta, []byte) {
	return Meta{
		Name: name, Version: version, Description: "Review helpers for " + name, Author: "Acme",
		License: "MIT", Keywords: []string{"review", "lint"}, ArtifactTypes: []string{"skill", "command"},
		Dependencies: map[string]string{"@acme/base": "^1.0.0"},
	}, []byte("fake .aam archive of " + name + "@" + version)
}

func publish(t *testing.T, r *Registry, name, version, tag string) registry.VersionInfo {
	t.Helper()
	meta, archive := testMeta(name, version)
	info, err := r.PublishMeta(context.Background(), archive, meta, tag)
	if err != nil {
		t.Fatalf("publish %s@%s: %v", name, version, err)
	}
	return info
}

// wantCode fails unless err carries code; it returns the apperr.
func wantCode(t *testing.T, err error, code apperr.Code) *apperr.Error {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %s", code)
	}
	e := apperr.As(err)
	if e.Code != code {
		t.Fatalf("got %s (%v), want %s", e.Code, err, code)
	}
	return e
}
