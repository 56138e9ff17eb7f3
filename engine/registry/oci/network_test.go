package oci

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
)

func TestParseURL(t *testing.T) {
	for raw, want := range map[string]Location{
		"oci://ghcr.io/acme/agentpack":  {Host: "ghcr.io", Namespace: "acme/agentpack"},
		"OCI://Localhost:5000/":         {Host: "localhost:5000"},
		"oci://127.0.0.1:5000/team_a/x": {Host: "127.0.0.1:5000", Namespace: "team_a/x"},
		"oci://[::1]:5000/ns":           {Host: "[::1]:5000", Namespace: "ns"},
	} {
		got, err := ParseURL(raw)
		if err != nil || got != want {
			t.Errorf("ParseURL(%q) = %+v, %v; want %+v", raw, got, err, want)
		}
	}
	for _, raw := range []string{"https://ghcr.io/x", "oci://", "oci://user:pw@ghcr.io/x", "oci://ghcr.io/UPPER", "oci://ghcr.io/x?y=1", "oci://h:port/x", "oci://ghcr.io/a//b"} {
		_, err := ParseURL(raw)
		e := wantCode(t, err, apperr.InvalidArgument)
		if strings.Contains(e.Message, "pw@") {
			t.Errorf("message shows the URL's password: %s", e.Message)
		}
	}
}

func TestPlainHTTPOnlyForLoopback(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost:5000": true, "LOCALHOST": true, "127.0.0.1": true, "127.8.9.10:80": true, "[::1]:5000": true,
		"ghcr.io": false, "10.0.0.1:5000": false, "localhost.example.com": false, "127.0.0.1.nip.io:5000": false, "[::2]:1": false,
	} {
		if got := IsLoopback(host); got != want {
			t.Errorf("IsLoopback(%q) = %v, want %v", host, got, want)
		}
	}
	// A registry reached through a non-loopback name is spoken to over TLS
	// only, even when the server behind it speaks plain HTTP: the TLS
	// handshake fails and no HTTP request ever reaches the server.
	reg := startRegistry(t, authNone)
	dial := func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, reg.Host)
	}
	r, err := New("remote", "oci://registry.example.test:443/ns", fsys.NewRealSystem(fsys.RealSystemOptions{}), Options{
		Getenv: env{"HOME": t.TempDir()}.get, Transport: &http.Transport{DialContext: dial}, Retries: -1,
	})
	if err != nil {
		t.Fatal(err)
	}
	if r.Location().PlainHTTP() {
		t.Fatal("plain HTTP for a remote host")
	}
	wantCode(t, r.Ping(context.Background()), apperr.RegistryUnreachable)
	if n := reg.Requests.Load(); n != 0 {
		t.Fatalf("%d plain-HTTP requests reached the server", n)
	}
}

func TestUnreachableRegistryIsNamed(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there any more
	r := open(t, "oci://"+addr+"/ns", nil)
	r.name = "team"
	for _, err := range []error{r.Ping(context.Background()), func() error { _, err := r.Index(context.Background()); return err }()} {
		e := wantCode(t, err, apperr.RegistryUnreachable)
		if !strings.Contains(e.Message, "team (oci://"+addr+"/ns)") || e.Details["registry"] != "team" {
			t.Errorf("error does not name the registry: %s %v", e.Message, e.Details)
		}
	}
}

func TestTransientFailuresAreRetriedABoundedNumberOfTimes(t *testing.T) {
	reg := startRegistry(t, authNone)
	reg.FailWith.Store(http.StatusServiceUnavailable)
	r := open(t, "oci://"+reg.Host+"/ns", nil)
	e := wantCode(t, r.Ping(context.Background()), apperr.RegistryUnreachable)
	if got := reg.Requests.Load(); got != 1+DefaultRetries {
		t.Errorf("%d requests, want %d (1 + %d retries)", got, 1+DefaultRetries, DefaultRetries)
	}
	if !strings.Contains(e.Hint, "retried") {
		t.Errorf("hint %q", e.Hint)
	}
	// A 503 that clears up is retried into success.
	reg.Requests.Store(0)
	go func() {
		for reg.Requests.Load() == 0 {
			time.Sleep(time.Millisecond)
		}
		reg.FailWith.Store(0)
	}()
	if err := r.Ping(context.Background()); err != nil {
		t.Fatalf("ping after a transient 503: %v", err)
	}
}

func TestRequestTimeoutIsBounded(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	srv := http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-block })}
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	go func() { _ = srv.Serve(l) }()
	defer srv.Close()
	r, err := New("slow", "oci://"+l.Addr().String()+"/ns", fsys.NewRealSystem(fsys.RealSystemOptions{}), Options{
		Getenv: env{"HOME": t.TempDir()}.get, Timeout: 200 * time.Millisecond, Retries: 1, MinBackoff: time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	wantCode(t, r.Ping(context.Background()), apperr.RegistryUnreachable)
}
