package mcpserver

import (
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"

	"github.com/agentpack/agentpack/internal/apperr"
)

// ConfirmTokenLifetime is how long a deploy's confirm_token stays valid.
const ConfirmTokenLifetime = 10 * time.Minute

// confirmScope is what a token is bound to: the request a deploy planned.
type confirmScope struct {
	Repo    string
	Profile string
	Target  string
	Machine string
}

// confirmToken is one issued token.
type confirmToken struct {
	value    string
	scope    confirmScope
	planHash string
	expires  time.Time
}

// confirmTokens holds the tokens a deploy call issued, in server memory
// only: a restart forgets them, so a plan is always re-checked by a live
// server. It is safe for concurrent use.
type confirmTokens struct {
	mu     sync.Mutex
	now    func() time.Time
	tokens map[string]*confirmToken
}

func newConfirmTokens(now func() time.Time) *confirmTokens {
	return &confirmTokens{now: now, tokens: map[string]*confirmToken{}}
}

// issue returns a new random 128-bit token for scope and planHash.
func (ts *confirmTokens) issue(scope confirmScope, planHash string) *confirmToken {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand never fails on supported platforms
	tok := &confirmToken{value: hex.EncodeToString(b[:]), scope: scope, planHash: planHash, expires: ts.now().Add(ConfirmTokenLifetime)}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.sweep()
	ts.tokens[tok.value] = tok
	return tok
}

// claim takes the token out of the store for one deploy_apply, so two
// concurrent calls cannot both use it. The caller gives it back with
// [confirmTokens.release] unless the apply succeeded.
func (ts *confirmTokens) claim(value string, scope confirmScope) (*confirmToken, error) {
	if value == "" {
		return nil, tokenErr(apperr.ConfirmTokenRequired, "deploy_apply needs the confirm_token of a deploy call")
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	tok, ok := ts.tokens[value]
	if !ok {
		return nil, tokenErr(apperr.ConfirmTokenMismatch, "unknown or already used confirm_token")
	}
	if !ts.now().Before(tok.expires) {
		delete(ts.tokens, value)
		return nil, tokenErr(apperr.ConfirmTokenExpired, "the confirm_token expired at %s", tok.expires.UTC().Format(time.RFC3339)).
			With("expired_at", tok.expires.UTC().Format(time.RFC3339))
	}
	if tok.scope != scope {
		return nil, tokenErr(apperr.ConfirmTokenMismatch, "the confirm_token was issued for another repo, profile, target or machine").
			With("token_scope", map[string]string{"repo": tok.scope.Repo, "profile": tok.scope.Profile, "target": tok.scope.Target, "machine": tok.scope.Machine})
	}
	delete(ts.tokens, value)
	return tok, nil
}

// release puts a claimed token back after a failed apply, so the agent can
// retry (for example with adopt) without planning again.
func (ts *confirmTokens) release(tok *confirmToken) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.tokens[tok.value] = tok
}

// sweep forgets tokens long expired; recently expired ones are kept so a
// late call is told "expired" rather than "unknown". The caller holds mu.
func (ts *confirmTokens) sweep() {
	cutoff := ts.now().Add(-ConfirmTokenLifetime)
	for k, t := range ts.tokens {
		if t.expires.Before(cutoff) {
			delete(ts.tokens, k)
		}
	}
}

func tokenErr(code apperr.Code, format string, args ...any) *apperr.Error {
	return apperr.New(code, format, args...).
		WithHint("call the deploy tool again and pass its confirm_token to deploy_apply within %s", ConfirmTokenLifetime).
		With("next_actions", []string{"call_deploy"})
}
