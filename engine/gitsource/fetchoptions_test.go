package gitsource

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/client"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
)

func TestWithDefaults(t *testing.T) {
	o := FetchOptions{}.withDefaults()
	if o.Timeout != 2*time.Minute || o.Retries != 3 {
		t.Errorf("defaults = %+v", o)
	}
	if o := (FetchOptions{Retries: -1, Timeout: time.Second}).withDefaults(); o.Retries != 0 || o.Timeout != time.Second {
		t.Errorf("no retries = %+v", o)
	}
}

func TestRetry(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
	tests := []struct {
		name     string
		err      error
		retries  int
		attempts int
	}{
		{"transient then fine", refused, 3, 3},
		{"transient forever", refused, 2, 3},
		{"no retries", refused, -1, 1},
		{"dns inside go-git wrapper", plumbing.NewUnexpectedError(&net.DNSError{Err: "no such host", Name: "example.invalid"}), 3, 4},
		{"http 503", plumbing.NewUnexpectedError(httpErr(503)), 2, 3},
		{"repository not found", transport.ErrRepositoryNotFound, 3, 1},
		{"auth", fmt.Errorf("x: %w", transport.ErrAuthenticationRequired), 3, 1},
		{"http 404 body", plumbing.NewUnexpectedError(httpErr(400)), 3, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var progress bytes.Buffer
			attempts := 0
			okAfter := 3 // "transient then fine" succeeds on the third attempt
			err := retry(context.Background(), FetchOptions{Retries: tt.retries, Progress: &progress}.withDefaults(), "op", func(context.Context) error {
				attempts++
				if tt.name == "transient then fine" && attempts == okAfter {
					return nil
				}
				return tt.err
			})
			if attempts != tt.attempts {
				t.Fatalf("attempts = %d, want %d (err %v)", attempts, tt.attempts, err)
			}
			if tt.attempts > 1 && !strings.Contains(progress.String(), "retrying in") {
				t.Errorf("no retry notice in progress: %q", progress.String())
			}
		})
	}
}

func httpErr(status int) error {
	req, _ := http.NewRequest(http.MethodGet, "https://example.com/r.git/info/refs", nil)
	return &githttp.Err{Response: &http.Response{StatusCode: status, Status: http.StatusText(status), Request: req}}
}

func TestRetryTimeoutPerAttempt(t *testing.T) {
	attempts := 0
	err := retry(context.Background(), FetchOptions{Timeout: 10 * time.Millisecond, Retries: 1}, "slow op", func(ctx context.Context) error {
		attempts++
		<-ctx.Done()
		return ctx.Err()
	})
	if attempts != 2 || !strings.Contains(fmt.Sprint(err), "timed out after 10ms") {
		t.Fatalf("attempts = %d, err = %v", attempts, err)
	}
	if e := remoteError(err, apperr.GitCloneFailed, "https://x/y", 1, "cannot fetch"); e.Code != apperr.Network {
		t.Errorf("timeout maps to %s", e.Code)
	}
}

func TestRetryStopsWhenCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	attempts := 0
	_ = retry(ctx, FetchOptions{Retries: 5}.withDefaults(), "op", func(context.Context) error {
		attempts++
		cancel()
		return &net.OpError{Op: "dial", Err: errors.New("refused")}
	})
	if attempts != 1 {
		t.Fatalf("attempts = %d after cancel", attempts)
	}
}

func TestRemoteErrorCodes(t *testing.T) {
	tests := []struct {
		err  error
		code apperr.Code
		hint string
	}{
		{&net.DNSError{Err: "no such host", Name: "h"}, apperr.Network, "network"},
		{plumbing.NewUnexpectedError(&net.OpError{Op: "dial", Err: errors.New("refused")}), apperr.Network, "network"},
		{transport.ErrRepositoryNotFound, apperr.GitCloneFailed, "does not exist"},
		{transport.ErrAuthorizationFailed, apperr.GitCloneFailed, "refused access"},
		{errors.New("protocol error"), apperr.GitCloneFailed, ""},
	}
	for _, tt := range tests {
		e := remoteError(tt.err, apperr.GitCloneFailed, "https://h/r.git", 3, "cannot fetch %s", "https://h/r.git")
		if e.Code != tt.code || !strings.Contains(e.Hint, tt.hint) || e.Details["url"] != "https://h/r.git" {
			t.Errorf("remoteError(%v) = %s %q %v", tt.err, e.Code, e.Hint, e.Details)
		}
	}
}

func TestStrategies(t *testing.T) {
	sha := strings.Repeat("ab", 20)
	tests := []struct {
		url   string
		m     match
		first string
		depth int
		n     int
	}{
		{"https://h/r.git", match{commit: sha, ref: "refs/heads/main"}, "+refs/heads/main:" + wantRef, 1, 2},
		{"https://h/r.git", match{commit: sha}, sha + ":" + wantRef, 1, 2},
		{"https://h/r.git", match{prefix: "abcd"}, "+refs/heads/*:refs/remotes/origin/*", 0, 1},
		{"file:///srv/r.git", match{commit: sha, ref: "refs/heads/main"}, "+refs/heads/*:refs/remotes/origin/*", 0, 1},
		{"/srv/r.git", match{commit: sha}, "+refs/heads/*:refs/remotes/origin/*", 0, 1},
	}
	for _, tt := range tests {
		got := strategies(tt.url, tt.m)
		if len(got) != tt.n || string(got[0].refspecs[0]) != tt.first || got[0].depth != tt.depth {
			t.Errorf("strategies(%s, %+v) = %+v", tt.url, tt.m, got)
		}
	}
}

// TestShallowFallback serves https:// from local folders in-process, so the
// shallow-first path runs; go-git's in-process server refuses shallow and
// exact-SHA fetches, which exercises the fallback to a full fetch.
func TestShallowFallback(t *testing.T) {
	old := client.Protocols["https"]
	client.InstallProtocol("https", localTransport{})
	t.Cleanup(func() { client.InstallProtocol("https", old) })

	u, c1, c2 := history(t)
	url := "https://localhost" + filepath.ToSlash(u.dir)
	cache := &Cache{Root: t.TempDir()}
	for ref, want := range map[string]plumbing.Hash{"main": c2, "v1": c2, c1.String(): c1} {
		commit, dir, err := cache.Checkout(context.Background(), url, ref, FetchOptions{})
		if err != nil || commit != want.String() {
			t.Fatalf("Checkout(%s) = %s, %v", ref, commit, err)
		}
		if _, err := cache.Dir(url, commit); err != nil || dir == "" {
			t.Fatal(err)
		}
	}
}
