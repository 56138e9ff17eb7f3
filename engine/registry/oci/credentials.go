package oci

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"path/filepath"
	"sync"

	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/credentials"

	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
)

// The environment variables agentpack reads for registry credentials.
const (
	// EnvToken holds a registry token (a GitHub token, a Harbor robot
	// secret, a password); it wins over the Docker credential store.
	EnvToken = "AGENTPACK_REGISTRY_TOKEN"
	// EnvUsername is the user name sent with EnvToken (default "agentpack";
	// GHCR accepts any, Harbor robots and htpasswd need the real one).
	EnvUsername = "AGENTPACK_REGISTRY_USERNAME"
	// EnvDockerConfig is Docker's config folder (default ~/.docker).
	EnvDockerConfig = "DOCKER_CONFIG"
)

// defaultTokenUser is the user name sent with a bare token.
const defaultTokenUser = "agentpack"

// Credentials finds the credential for a registry host: AGENTPACK_REGISTRY_TOKEN
// first, then Docker's config.json (credHelpers, credsStore, auths, in
// Docker's order). The config file is read through the System; credential
// helpers run through oras-go's credentials package. It remembers every
// secret it hands out so error messages can be scrubbed of them.
type Credentials struct {
	sys    fsys.System
	getenv func(string) string
	home   string

	mu      sync.Mutex
	secrets []string
	offered map[string]bool // host -> a non-empty credential was given
}

// NewCredentials returns the credential source for one process environment.
func NewCredentials(sys fsys.System, getenv func(string) string, home string) *Credentials {
	return &Credentials{sys: sys, getenv: getenv, home: home, offered: map[string]bool{}}
}

// dockerConfig is the part of config.json that says where credentials are.
type dockerConfig struct {
	CredsStore  string            `json:"credsStore"`
	CredHelpers map[string]string `json:"credHelpers"`
}

// Lookup implements auth.CredentialFunc.
func (c *Credentials) Lookup(ctx context.Context, hostport string) (auth.Credential, error) {
	cred, err := c.lookup(ctx, hostport)
	if err != nil {
		return auth.EmptyCredential, err
	}
	if cred != auth.EmptyCredential {
		c.mu.Lock()
		c.offered[hostport] = true
		for _, s := range []string{cred.Password, cred.RefreshToken, cred.AccessToken} {
			if len(s) >= 4 {
				c.secrets = append(c.secrets, s)
			}
		}
		c.mu.Unlock()
	}
	return cred, nil
}

func (c *Credentials) lookup(ctx context.Context, hostport string) (auth.Credential, error) {
	if tok := c.getenv(EnvToken); tok != "" {
		user := c.getenv(EnvUsername)
		if user == "" {
			user = defaultTokenUser
		}
		return auth.Credential{Username: user, Password: tok}, nil
	}
	data, path, err := c.readDockerConfig()
	if err != nil || data == nil {
		return auth.EmptyCredential, err
	}
	var cfg dockerConfig
	if err := json.Unmarshal(data, &cfg); err != nil {
		return auth.EmptyCredential, apperr.New(apperr.ConfigInvalid, "the Docker config %s is not valid JSON", path).
			WithHint("fix or remove it, or set %s", EnvToken).With("reason_code", "docker_config_invalid")
	}
	server := credentials.ServerAddressFromHostname(hostport)
	helper := cfg.CredHelpers[hostport]
	if helper == "" {
		helper = cfg.CredHelpers[server]
	}
	if helper == "" {
		helper = cfg.CredsStore
	}
	if helper != "" {
		cred, err := credentials.NewNativeStore(helper).Get(ctx, server)
		if err != nil {
			// The helper's own output is not shown: it may echo a secret.
			return auth.EmptyCredential, apperr.New(apperr.RegistryAuthRequired,
				"the Docker credential helper docker-credential-%s gave no credential for %s", helper, hostport).
				WithHint("check that docker-credential-%s is installed and logged in (docker login %s), or set %s", helper, hostport, EnvToken).
				With("registry_host", hostport).With("reason_code", "credential_helper_failed")
		}
		return cred, nil
	}
	store, err := credentials.NewMemoryStoreFromDockerConfig(data)
	if err != nil {
		return auth.EmptyCredential, apperr.New(apperr.ConfigInvalid, "the Docker config %s has an invalid auths entry", path).
			WithHint("run docker login %s again, or set %s", hostport, EnvToken).With("reason_code", "docker_config_invalid")
	}
	return store.Get(ctx, server)
}

// readDockerConfig returns config.json ($DOCKER_CONFIG/config.json, else
// ~/.docker/config.json), or nil when there is none.
func (c *Credentials) readDockerConfig() ([]byte, string, error) {
	dir := c.getenv(EnvDockerConfig)
	if dir == "" {
		if c.home == "" {
			return nil, "", nil
		}
		dir = filepath.Join(c.home, ".docker")
	}
	p, err := fsys.NewAbsPath(filepath.Join(dir, "config.json"))
	if err != nil {
		return nil, "", nil // a relative DOCKER_CONFIG: Docker would not find it either
	}
	data, err := c.sys.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, p.String(), nil
	}
	return data, p.String(), err
}

// Offered reports whether a credential was handed out for host, which tells
// "missing" from "refused".
func (c *Credentials) Offered(host string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.offered[host]
}

// Redact replaces every secret this source handed out, and the env token,
// in s.
func (c *Credentials) Redact(s string) string {
	c.mu.Lock()
	secrets := append([]string{c.getenv(EnvToken)}, c.secrets...)
	c.mu.Unlock()
	return redactAll(s, secrets)
}
