package plan

import (
	"strings"

	"github.com/agentpack/agentpack/internal/fsys"
)

// statScopeRootsFile, in a scope's folder, names the roots the scope
// covers (NUL-separated: a path may hold a newline), so that a writer
// other than a plan (a rollback) can record what it wrote in the cache of
// every scope a later plan reads.
const statScopeRootsFile = "roots"

// LoadScopedStatCaches is the stat cache of each scope kept in stateDir
// whose folder names its roots, scoped to them (read, like
// [LoadStatCache], when first used). A scope written by an older version
// names none and is left out: it only costs the next plan some hashing.
func LoadScopedStatCaches(sys fsys.System, stateDir fsys.AbsPath) []*StatCache {
	dir := StatCachePath(stateDir).JoinName(statScopesDir)
	entries, err := sys.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []*StatCache
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		data, err := sys.ReadFile(dir.JoinName(e.Name()).JoinName(statScopeRootsFile))
		if err != nil || len(data) == 0 {
			continue
		}
		names := strings.Split(string(data), "\x00")
		if scopeKey(names) != e.Name() {
			continue // not the roots this folder is named after
		}
		roots := make([]fsys.AbsPath, len(names))
		for i, n := range names {
			roots[i] = fsys.AbsPath(n)
		}
		c := LoadStatCache(sys, stateDir)
		c.Scope(roots)
		out = append(out, c)
	}
	return out
}

// Covers reports whether path is below one of c's roots; an unscoped
// cache covers every path.
func (c *StatCache) Covers(path fsys.AbsPath) bool {
	return c.scope == nil || inScope(c.scope, string(path)) // no copy of path for each of 10,000 files and 32 scopes
}

// writeScopeRoots names c's roots in its scope's folder (see
// [statScopeRootsFile]); a failure only costs a rollback's recording.
func (c *StatCache) writeScopeRoots() {
	if c.scope == nil || c.base == c.dir {
		return
	}
	_ = c.sys.WriteFile(c.base.JoinName(statScopeRootsFile), []byte(strings.Join(c.scope, "\x00")), 0o600)
}
