package oci

import (
	"context"
	"testing"
	"time"

	"github.com/agentpack/agentpack/engine/registry"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/agentpack/agentpack/internal/ocitest"
)

// The test registry modes and account.
const (
	authNone  = ocitest.None
	authBasic = ocitest.Basic
	authToken = ocitest.Token
	testUser  = ocitest.User
	testPass  = ocitest.Password
)

type authMode = ocitest.Auth

// startRegistry runs an in-process registry for the test.
func startRegistry(t *testing.T, mode authMode) *ocitest.Server {
	t.Helper()
	s := ocitest.Start(mode)
	t.Cleanup(s.Close)
	return s
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
