package engine_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/targets"
)

// stalledRemote is a TCP server that accepts connections and never answers
// (a TLS handshake to it hangs). accepted receives each connection.
type stalledRemote struct {
	ln       net.Listener
	accepted chan struct{}
	mu       sync.Mutex
	conns    []net.Conn
}

func newStalledRemote(t *testing.T) *stalledRemote {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &stalledRemote{ln: ln, accepted: make(chan struct{}, 16)}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns = append(s.conns, c)
			s.mu.Unlock()
			s.accepted <- struct{}{}
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, c := range s.conns {
			c.Close()
		}
	})
	return s
}

func (s *stalledRemote) url() string { return "https://" + s.ln.Addr().String() + "/org/skills.git" }

func waitFor(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(20 * time.Second): // a liveness bound, far below the 10 min git timeout the test sets
		t.Fatalf("%s did not happen", what)
	}
}

// TestStalledRemoteHoldsNoLock: source add clones outside the state lock,
// so while a remote stalls every other mutation still gets the lock; and
// cancelling the call's context ends the call long before the git timeout.
func TestStalledRemoteHoldsNoLock(t *testing.T) {
	remote := newStalledRemote(t)
	env := testEnv(t)
	env.GitTimeout, env.GitRetries = "10m", "0"
	repo := writeRepo(t, map[string]string{"agentpack.yaml": codexOnlyManifest, "modules/base/AGENTS.md": "Base.\n", "modules/s/SKILL.md": "---\nname: s\ndescription: d\n---\nS.\n"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, _, err := engine.New(env, targets.NewSet()).SourceAdd(ctx, engine.Request{Repo: repo}, engine.SourceAddOptions{Spec: remote.url()})
		done <- err
	}()
	waitFor(t, remote.accepted, "the clone's connection")

	t0 := time.Now()
	other := engine.New(env, targets.NewSet())
	lctx, lcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer lcancel()
	ran := false
	if err := other.WithLock(lctx, "probe", func([]string) error { ran = true; return nil }); err != nil || !ran {
		t.Fatalf("the state lock is held while a remote stalls: %v", err)
	}

	t.Logf("lock after %s", time.Since(t0))
	cancel()
	var err error
	select {
	case err = <-done:
	case <-time.After(20 * time.Second): // a liveness bound, far below the 10 min git timeout set above
		t.Fatal("source add did not return after cancel")
	}
	t.Logf("returned after %s", time.Since(t0))
	if err == nil || !strings.Contains(apperr.As(err).Message, "canceled") && !errors.Is(err, context.Canceled) {
		t.Fatalf("want a cancelled clone, got %v", err)
	}
}

// TestGitTimeoutFromEnv: AGENTPACK_GIT_TIMEOUT and AGENTPACK_GIT_RETRIES
// (else config.toml's [git] timeout and retries) bound a stalled fetch; a bad value is E_CONFIG_INVALID naming it.
func TestGitTimeoutFromEnv(t *testing.T) {
	remote := newStalledRemote(t)
	env := testEnv(t)
	env.GitTimeout, env.GitRetries = "300ms", "0"
	repo := writeRepo(t, map[string]string{"agentpack.yaml": codexOnlyManifest, "modules/base/AGENTS.md": "Base.\n", "modules/s/SKILL.md": "---\nname: s\ndescription: d\n---\nS.\n"})
	_, _, err := engine.New(env, targets.NewSet()).SourceAdd(context.Background(), engine.Request{Repo: repo}, engine.SourceAddOptions{Spec: remote.url()})
	if apperr.CodeOf(err) != apperr.Network || !strings.Contains(err.Error(), "timed out after 300ms") {
		t.Fatalf("want E_NETWORK timed out after 300ms, got %v", err)
	}
	if n := len(remote.accepted); n != 1 {
		t.Errorf("retries 0: want 1 connection, got %d", n)
	}

	// config.toml's [git] table when the environment says nothing.
	env.GitTimeout, env.GitRetries = "", ""
	if err := os.MkdirAll(env.AgentpackHome, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(env.AgentpackHome, "config.toml"), []byte("[git]\ntimeout = \"250ms\"\nretries = 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = engine.New(env, targets.NewSet()).SourceAdd(context.Background(), engine.Request{Repo: repo}, engine.SourceAddOptions{Spec: remote.url()})
	if apperr.CodeOf(err) != apperr.Network || !strings.Contains(err.Error(), "timed out after 250ms") {
		t.Fatalf("want E_NETWORK timed out after 250ms from config.toml, got %v", err)
	}

	env.GitTimeout = "soon"
	_, _, err = engine.New(env, targets.NewSet()).SourceAdd(context.Background(), engine.Request{Repo: repo}, engine.SourceAddOptions{Spec: remote.url()})
	if apperr.CodeOf(err) != apperr.ConfigInvalid || !strings.Contains(err.Error(), "AGENTPACK_GIT_TIMEOUT") {
		t.Fatalf("want E_CONFIG_INVALID naming AGENTPACK_GIT_TIMEOUT, got %v", err)
	}
}
