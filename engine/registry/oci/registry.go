package oci

import (
	"context"
	"net"
	"net/http"
	"os"
	"time"

	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/retry"

	"github.com/agentpack/agentpack/engine/registry"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
)

// Type is the registry type name in config.toml.
const Type = "oci"

// The network defaults: every request is bounded in time, and transient
// failures (timeouts, resets, 408, 429, 5xx) are retried a bounded number
// of times with exponential backoff.
const (
	DefaultTimeout    = 2 * time.Minute
	DefaultDialTimout = 10 * time.Second
	DefaultRetries    = 3
)

// Options tunes how a [Registry] reaches the network. The zero value is
// what agentpack uses; tests swap the transport and shorten the waits.
type Options struct {
	// Getenv reads the environment (default os.Getenv).
	Getenv func(string) string
	// Home is the user's home folder, for ~/.docker (default $HOME).
	Home string
	// Transport replaces the HTTP transport (tests).
	Transport http.RoundTripper
	// Timeout bounds one HTTP request, body included (default 2 minutes).
	Timeout time.Duration
	// Retries is how often a transient failure is retried (default 3;
	// negative for none).
	Retries int
	// MinBackoff is the first wait between retries (default 250 ms).
	MinBackoff time.Duration
	// Now is the clock for publish times (default time.Now).
	Now func() time.Time
}

// Registry is one OCI registry namespace holding agentpack packages.
type Registry struct {
	name    string
	loc     Location
	sys     fsys.System
	creds   *Credentials
	client  *auth.Client
	retries int
	now     func() time.Time
}

// New opens the registry called name at rawURL (oci://host[:port]/ns).
// Nothing is contacted until a method is called.
func New(name, rawURL string, sys fsys.System, opts Options) (*Registry, error) {
	loc, err := ParseURL(rawURL)
	if err != nil {
		return nil, err
	}
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.Home == "" {
		opts.Home = opts.Getenv("HOME")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	creds := NewCredentials(sys, opts.Getenv, opts.Home)
	r := &Registry{name: name, loc: loc, sys: sys, creds: creds, retries: retriesOf(opts), now: opts.Now}
	r.client = &auth.Client{
		Client:     newHTTPClient(opts, r.retries),
		Cache:      auth.NewCache(),
		Credential: creds.Lookup,
	}
	r.client.SetUserAgent("agentpack")
	return r, nil
}

func retriesOf(opts Options) int {
	switch {
	case opts.Retries < 0:
		return 0
	case opts.Retries == 0:
		return DefaultRetries
	}
	return opts.Retries
}

// newHTTPClient is the retrying, time-bounded client every request uses.
func newHTTPClient(opts Options, retries int) *http.Client {
	base := opts.Transport
	if base == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.DialContext = (&net.Dialer{Timeout: DefaultDialTimout, KeepAlive: 30 * time.Second}).DialContext
		t.TLSHandshakeTimeout = DefaultDialTimout
		t.ResponseHeaderTimeout = time.Minute
		base = t
	}
	minWait := opts.MinBackoff
	if minWait == 0 {
		minWait = 250 * time.Millisecond
	}
	policy := &retry.GenericPolicy{
		Retryable: retry.DefaultPredicate,
		Backoff:   retry.ExponentialBackoff(minWait, 2, 0.1),
		MinWait:   minWait,
		MaxWait:   5 * time.Second,
		MaxRetry:  retries,
	}
	timeout := opts.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	return &http.Client{
		Transport: &retry.Transport{Base: base, Policy: func() retry.Policy { return policy }},
		Timeout:   timeout,
	}
}

// Name returns the configured name.
func (r *Registry) Name() string { return r.name }

// URL returns the canonical oci:// URL.
func (r *Registry) URL() string { return r.loc.String() }

// Type returns "oci".
func (r *Registry) Type() string { return Type }

// Location returns the parsed URL.
func (r *Registry) Location() Location { return r.loc }

// repository returns the oras repository for a repository name under the
// namespace, plain HTTP only on loopback.
func (r *Registry) repository(name string) (*remote.Repository, error) {
	repo, err := remote.NewRepository(r.loc.Host + "/" + r.loc.Repo(name))
	if err != nil {
		return nil, apperr.New(apperr.InvalidArgument, "%q is not a valid repository on %s", name, r.label()).
			With("reason_code", "oci_repository_invalid")
	}
	repo.Client = r.client
	repo.PlainHTTP = r.loc.PlainHTTP()
	repo.SkipReferrersGC = true
	return repo, nil
}

// Ping checks that the registry answers and accepts the credentials
// (E_REGISTRY_UNREACHABLE or E_REGISTRY_AUTH_REQUIRED otherwise).
func (r *Registry) Ping(ctx context.Context) error {
	reg, err := remote.NewRegistry(r.loc.Host)
	if err != nil {
		return apperr.New(apperr.InvalidArgument, "invalid registry host %q", r.loc.Host)
	}
	reg.Client = r.client
	reg.PlainHTTP = r.loc.PlainHTTP()
	err = reg.Ping(ctx)
	if isNotFound(err) {
		return apperr.New(apperr.RegistryUnreachable, "%s does not serve the OCI distribution API (GET /v2/ answered 404)", r.label()).
			WithHint("check the registry URL").With("registry", r.name).With("reason_code", "not_a_registry")
	}
	return r.fail(err, "ping")
}

// Open implements registry.Opener for type "oci"; the engine registers it.
func Open(cfg registry.Config, sys fsys.System) (registry.Registry, error) {
	return New(cfg.Name, cfg.URL, sys, Options{})
}

var _ registry.Registry = (*Registry)(nil)
