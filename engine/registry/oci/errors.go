package oci

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/errcode"

	"github.com/agentpack/agentpack/internal/apperr"
)

// errNotFound marks a missing repository, tag or blob inside this package;
// callers turn it into the right E_* code.
var errNotFound = errors.New("not found")

// fail maps an oras or network error of operation what into an apperr.
// Secrets are scrubbed from every message; the cause is not kept, because
// its text could carry a header or a URL with a token.
func (r *Registry) fail(err error, what string) error {
	if err == nil {
		return nil
	}
	var ae *apperr.Error
	if errors.As(err, &ae) {
		return ae
	}
	if isNotFound(err) {
		return errNotFound
	}
	host := r.loc.Host
	var resp *errcode.ErrorResponse
	status := 0
	if errors.As(err, &resp) {
		status = resp.StatusCode
	}
	switch {
	case errors.Is(err, auth.ErrBasicCredentialNotFound) || status == http.StatusUnauthorized || status == http.StatusForbidden:
		return r.authError(what, status)
	case errors.Is(err, context.Canceled):
		return apperr.New(apperr.RegistryUnreachable, "%s on registry %s was canceled", what, r.label()).
			With("registry", r.name).With("reason_code", "canceled")
	case status != 0 && status < 500 && status != http.StatusRequestTimeout && status != http.StatusTooManyRequests:
		return apperr.New(apperr.Network, "registry %s answered %d to %s: %s", r.label(), status, what, r.creds.Redact(shortErr(err))).
			WithHint("check the registry URL and that %s is an OCI registry", host).
			With("registry", r.name).With("status", status).With("reason_code", "registry_http_error")
	}
	return apperr.New(apperr.RegistryUnreachable, "registry %s is unreachable (%s): %s", r.label(), what, r.creds.Redact(shortErr(err))).
		WithHint("check the network and that %s is up; agentpack retried %d times", host, r.retries).
		With("registry", r.name).With("url", r.loc.String()).With("reason_code", "registry_unreachable")
}

// authError is E_REGISTRY_AUTH_REQUIRED, saying whether credentials were
// missing or refused, and never what they were.
func (r *Registry) authError(what string, status int) error {
	host := r.loc.Host
	if r.creds.Offered(host) {
		return apperr.New(apperr.RegistryAuthRequired, "registry %s refused the credentials for %s", r.label(), what).
			WithHint("check that the token or docker login for %s is valid and allowed to %s (for GHCR: packages: write to publish)", host, verbOf(what)).
			With("registry", r.name).With("status", status).With("reason_code", "credentials_refused")
	}
	return apperr.New(apperr.RegistryAuthRequired, "registry %s needs credentials for %s", r.label(), what).
		WithHint("run docker login %s, or set %s (and %s when the registry needs a user name)", host, EnvToken, EnvUsername).
		With("registry", r.name).With("status", status).With("reason_code", "credentials_missing")
}

func (r *Registry) label() string {
	if r.name == "" {
		return r.loc.String()
	}
	return r.name + " (" + r.loc.String() + ")"
}

func verbOf(what string) string {
	if strings.HasPrefix(what, "publish") || strings.HasPrefix(what, "update") {
		return "push"
	}
	return "pull"
}

func isNotFound(err error) bool {
	if errors.Is(err, errdef.ErrNotFound) || errors.Is(err, errNotFound) {
		return true
	}
	var resp *errcode.ErrorResponse
	return errors.As(err, &resp) && resp.StatusCode == http.StatusNotFound
}

// shortErr keeps the last, most specific part of a wrapped error chain.
func shortErr(err error) string {
	s := err.Error()
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// redactAll replaces each non-empty secret in s.
func redactAll(s string, secrets []string) string {
	for _, sec := range secrets {
		if len(sec) >= 4 {
			s = strings.ReplaceAll(s, sec, "***")
		}
	}
	return s
}
