// Package overlay customises a module without forking it: files in
// overlay folders of the desired-state repo replace or patch the
// upstream module's files, in layers (upstream → global → machine →
// project), with a recorded merge base so `overlay rebase` can carry the
// edits onto a new upstream. The layout and metadata are those of the
// original agentpack, so its repos work unchanged.
package overlay

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/agentpack/agentpack/internal/fsys"
)

// Scope is an overlay layer.
type Scope string

// The scopes, lowest precedence first; "upstream" names the module's own
// files in explanations.
const (
	Upstream Scope = "upstream"
	Global   Scope = "global"
	Machine  Scope = "machine"
	Project  Scope = "project"
)

// Scopes are the overlay scopes in the order they apply.
var Scopes = []Scope{Global, Machine, Project}

// ParseScope checks a --scope value.
func ParseScope(s string) (Scope, bool) {
	for _, sc := range Scopes {
		if string(sc) == s {
			return sc, true
		}
	}
	return "", false
}

// fsKeyPrefixMax bounds the readable part of an FSKey so deep overlay
// paths stay under path-length limits.
const fsKeyPrefixMax = 64

// FSKey is the folder name of a module's overlays: the id made safe for
// every filesystem, then "--" and the first 10 hex digits of its sha256,
// so "a:b" and "a/b" do not collide.
func FSKey(moduleID string) string {
	return fsKey(moduleID, fsKeyPrefixMax)
}

func fsKey(moduleID string, max int) string {
	safe := strings.Map(func(r rune) rune {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return r
		}
		return '_'
	}, moduleID)
	if safe == "" {
		safe = "module"
	}
	if len(safe) > max {
		safe = safe[:max]
	}
	sum := sha256.Sum256([]byte(moduleID))
	return safe + "--" + hex.EncodeToString(sum[:])[:10]
}

// Layout locates overlay folders in a desired-state repo for one machine
// and project.
type Layout struct {
	Repo      fsys.AbsPath
	MachineID string
	ProjectID string
}

// scopeRoot is the folder that holds a scope's module folders.
func (l Layout) scopeRoot(scope Scope) fsys.AbsPath {
	switch scope {
	case Machine:
		return l.Repo.JoinName("overlays").JoinName("machines").JoinName(l.MachineID)
	case Project:
		return l.Repo.JoinName("projects").JoinName(l.ProjectID).JoinName("overlays")
	}
	return l.Repo.JoinName("overlays")
}

// HasScope reports whether the folder holding scope's overlays exists.
func (l Layout) HasScope(sys fsys.System, scope Scope) bool {
	return exists(sys, l.scopeRoot(scope))
}

// ScopeDir is the canonical overlay folder of moduleID in scope.
func (l Layout) ScopeDir(scope Scope, moduleID string) fsys.AbsPath {
	return l.scopeRoot(scope).JoinName(FSKey(moduleID))
}

// Dir is the overlay folder of moduleID in scope: the canonical FSKey
// folder, or an older name the original agentpack used (an unbounded key,
// or the bare id) when only that one exists.
func (l Layout) Dir(sys fsys.System, scope Scope, moduleID string) fsys.AbsPath {
	root := l.scopeRoot(scope)
	canonical := root.JoinName(FSKey(moduleID))
	if exists(sys, canonical) {
		return canonical
	}
	var fallbacks []string
	if long := fsKey(moduleID, int(^uint(0)>>1)); long != FSKey(moduleID) {
		fallbacks = append(fallbacks, long)
	}
	if legacyName(moduleID) {
		fallbacks = append(fallbacks, moduleID)
	}
	for _, name := range fallbacks {
		if p := root.JoinName(name); exists(sys, p) {
			return p
		}
	}
	return canonical
}

func legacyName(id string) bool {
	return id != "" && id != "." && id != ".." && !strings.ContainsAny(id, `/\`)
}

func exists(sys fsys.System, p fsys.AbsPath) bool {
	fi, err := sys.Lstat(p)
	return err == nil && fi.IsDir()
}

// NormalizeMachineID lower-cases s and turns every run of characters
// other than letters, digits, '-' and '_' into one '-', trimming '-' at
// the ends ("Alice's MacBook" → "alice-s-macbook").
func NormalizeMachineID(s string) string {
	var b strings.Builder
	lastDash := false
	for _, r := range strings.ToLower(strings.TrimSpace(s)) {
		ok := r < 128 && (r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_')
		if !ok {
			if lastDash {
				continue
			}
			r = '-'
		}
		lastDash = r == '-'
		b.WriteRune(r)
	}
	return strings.Trim(b.String(), "-")
}

// ProjectID identifies a project across clones: the first 16 hex digits
// of the sha256 of its normalised git origin URL, or of its folder's path
// when it has no origin.
func ProjectID(originURL string, root fsys.AbsPath) string {
	basis := root.String()
	if originURL != "" {
		basis = normalizeRemote(originURL)
	}
	sum := sha256.Sum256([]byte(basis))
	return hex.EncodeToString(sum[:])[:16]
}

// normalizeRemote makes the ssh, https and http forms of one remote equal:
// git@github.com:org/repo.git and https://github.com/org/repo both become
// github.com/org/repo.
func normalizeRemote(u string) string {
	u = strings.TrimSuffix(strings.TrimSpace(u), ".git")
	if rest, ok := strings.CutPrefix(u, "git@"); ok {
		return strings.ToLower(strings.ReplaceAll(rest, ":", "/"))
	}
	for _, p := range []string{"https://", "http://"} {
		if rest, ok := strings.CutPrefix(u, p); ok {
			return strings.ToLower(rest)
		}
	}
	return strings.ToLower(u)
}
