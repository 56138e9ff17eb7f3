package engine

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentpack/agentpack/engine/gitsource"
	"github.com/agentpack/agentpack/engine/lockfile"
	"github.com/agentpack/agentpack/engine/manifest"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/pelletier/go-toml/v2"
)

// Git network settings: the environment wins over config.toml's [git]
// table, which wins over the defaults of [gitsource.FetchOptions].
const (
	envGitTimeout = "AGENTPACK_GIT_TIMEOUT"
	envGitRetries = "AGENTPACK_GIT_RETRIES"
)

// gitConfig is the [git] table of $AGENTPACK_HOME/config.toml.
type gitConfig struct {
	Git struct {
		Timeout *string `toml:"timeout"`
		Retries *int    `toml:"retries"`
	} `toml:"git"`
}

// checkouts remembers, for one use case, what each (url, ref)
// checked out to, failures included: a use case fetches outside the state
// lock first ([Engine.prefetch]) and finds the same answers under it
// without touching the network again.
type checkouts struct {
	mu   sync.Mutex
	done map[repoRef]checkoutResult
}

type checkoutResult struct {
	commit, dir string
	err         error
}

// fetchOptions are the git timeout and retries of this environment
// ($AGENTPACK_GIT_TIMEOUT, $AGENTPACK_GIT_RETRIES, config.toml [git]).
func (e *Engine) fetchOptions() (gitsource.FetchOptions, error) {
	opt := gitsource.FetchOptions{Progress: e.GitProgress, OnRepair: e.onRepair}
	timeout, retries := e.Env.GitTimeout, e.Env.GitRetries
	timeoutFrom, retriesFrom := envGitTimeout, envGitRetries
	if timeout == "" || retries == "" {
		if text, err := e.optionalFile(e.configPath()); err == nil && text != nil {
			var c gitConfig
			if err := toml.Unmarshal(text, &c); err != nil {
				return opt, apperr.Wrap(err, apperr.ConfigInvalid, "cannot read %s: %v", e.configPath(), err).
					WithHint("fix the TOML syntax").With("path", e.configPath())
			}
			if timeout == "" && c.Git.Timeout != nil {
				timeout, timeoutFrom = *c.Git.Timeout, "git.timeout in "+e.configPath()
			}
			if retries == "" && c.Git.Retries != nil {
				retries, retriesFrom = strconv.Itoa(*c.Git.Retries), "git.retries in "+e.configPath()
			}
		}
	}
	if timeout != "" {
		d, err := time.ParseDuration(strings.TrimSpace(timeout))
		if err != nil || d <= 0 {
			return opt, apperr.New(apperr.ConfigInvalid, "%s: %q is not a positive duration", timeoutFrom, timeout).
				WithHint("use a Go duration such as 30s, 2m or 1m30s").With("value", timeout)
		}
		opt.Timeout = d
	}
	if retries != "" {
		n, err := strconv.Atoi(strings.TrimSpace(retries))
		if err != nil || n < 0 || n > 10 {
			return opt, apperr.New(apperr.ConfigInvalid, "%s: %q is not a number of retries from 0 to 10", retriesFrom, retries).
				WithHint("use 0 for no retries").With("value", retries)
		}
		opt.Retries = n
		if n == 0 {
			opt.Retries = -1 // FetchOptions: negative means none
		}
	}
	return opt, nil
}

func (e *Engine) configPath() string { return filepath.Join(e.Env.AgentpackHome, "config.toml") }

// onRepair turns the git cache's repair of a corrupted checkout into a
// warning of the use case running.
func (e *Engine) onRepair(path string, cause error) {
	msg := "the git cache checkout " + path + " was damaged and was downloaded again"
	if cause != nil {
		msg += " (" + apperr.As(cause).Message + ")"
	}
	e.repairs.add(msg)
}

// takeRepairs returns the repair warnings so far and forgets them.
func (e *Engine) takeRepairs() []string { return e.repairs.take() }

// repairLog collects repair warnings from several goroutines. A nil log
// (an engine not built by New) keeps nothing.
type repairLog struct {
	mu   sync.Mutex
	msgs []string
}

func (l *repairLog) add(msg string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.msgs = append(l.msgs, msg)
}

func (l *repairLog) take() []string {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.msgs
	l.msgs = nil
	return out
}

// checkoutsKey is the context key of a use case's [checkouts].
type checkoutsKey struct{}

// withCheckouts returns ctx remembering checkouts for one use case (kept
// when ctx already does).
func withCheckouts(ctx context.Context) context.Context {
	if _, ok := ctx.Value(checkoutsKey{}).(*checkouts); ok {
		return ctx
	}
	return context.WithValue(ctx, checkoutsKey{}, &checkouts{done: map[repoRef]checkoutResult{}})
}

// checkout returns the commit and cached checkout of (url, ref), fetching
// it when the cache lacks it; within one use case (see [withCheckouts])
// each (url, ref) is asked once.
func (e *Engine) checkout(ctx context.Context, url, ref string) (string, string, error) {
	key := repoRef{url, ref}
	memo, _ := ctx.Value(checkoutsKey{}).(*checkouts)
	if memo != nil {
		memo.mu.Lock()
		r, ok := memo.done[key]
		memo.mu.Unlock()
		if ok {
			return r.commit, r.dir, r.err
		}
	}
	opt, err := e.fetchOptions()
	if err != nil {
		return "", "", err
	}
	commit, dir, err := e.GitCache().Checkout(ctx, url, ref, opt)
	if memo != nil {
		memo.mu.Lock()
		memo.done[key] = checkoutResult{commit, dir, err}
		memo.mu.Unlock()
	}
	return commit, dir, err
}

// prefetch fetches refs into the content-addressed git cache before a use
// case takes the state lock, so a slow or stalled remote never holds the
// lock (every other mutation would fail with E_LOCKED meanwhile). Failures
// are remembered, not returned: the use case meets them again under the
// lock, at once, and reports them as it always does.
func (e *Engine) prefetch(ctx context.Context, refs []repoRef) {
	if len(refs) > 0 {
		_, _ = e.checkoutAll(ctx, refs)
	}
}

// prefetchSync prefetches what lock, fetch or update will check out.
func (e *Engine) prefetchSync(ctx context.Context, req Request, relock, fetch bool) {
	m, repo, err := e.LoadManifest(ctx, req)
	if err != nil {
		return
	}
	prev, _ := lockfile.LoadOn(e.Sys, abs(filepath.Join(repo, lockfile.FileName)))
	switch {
	case relock:
		keep := prev
		if fetch {
			keep = nil
		}
		refs, err := lockRefs(m, keep)
		if err == nil {
			e.prefetch(ctx, refs)
		}
	case prev != nil:
		_, _ = e.fetchLocked(ctx, prev) // repairs, too, happen outside the lock
	}
}

// prefetchPinned prefetches the pinned commits of req's lockfile that the
// cache does not hold yet (a deploy after a fresh clone of the repo).
func (e *Engine) prefetchPinned(ctx context.Context, req Request) {
	path := abs(filepath.Join(e.Env.ResolveRepo(req.Repo), lockfile.FileName))
	if _, err := e.Sys.Lstat(path); err != nil {
		return // no lockfile: nothing pinned (and the source cache stays unread)
	}
	lf, err := lockfile.LoadOn(e.Sys, path)
	if err != nil {
		return
	}
	var missing []repoRef
	for _, r := range pinnedRefs(lf) {
		p, err := e.GitCache().Path(r.url, r.ref)
		if err != nil {
			continue
		}
		if _, err := e.Sys.Lstat(abs(p).JoinName(gitsource.MarkerFile)); errors.Is(err, fs.ErrNotExist) {
			missing = append(missing, r)
		}
	}
	e.prefetch(ctx, missing)
}

// prefetchSources prefetches the refs of sources (and of the git modules
// that use them) for source update.
func (e *Engine) prefetchSources(ctx context.Context, req Request, name string, all bool) {
	m, _, err := e.LoadManifest(ctx, req)
	if err != nil {
		return
	}
	var refs []repoRef
	for _, s := range m.Sources {
		if !all && s.Name != name {
			continue
		}
		refs = append(refs, repoRef{s.URL, s.Ref})
		for _, id := range modulesUsing(m, s) {
			if mod := moduleByID(m, id); mod != nil && mod.Source.Git != nil && !strings.EqualFold(mod.Source.Git.Ref, s.Commit) {
				refs = append(refs, repoRef{mod.Source.Git.URL, mod.Source.Git.Ref})
			}
		}
	}
	e.prefetch(ctx, refs)
}

// lockRefs lists the (url, ref) pairs lock checks out for m, keeping the
// pins of prev for modules whose source did not change.
func lockRefs(m *manifest.Manifest, prev *lockfile.Lockfile) ([]repoRef, error) {
	refs, _, err := lockWants(m, prev)
	return refs, err
}

// pinnedRefs lists the distinct (url, commit) pairs lf pins.
func pinnedRefs(lf *lockfile.Lockfile) []repoRef {
	var refs []repoRef
	seen := map[repoRef]bool{}
	for _, m := range lf.Modules {
		if g := m.ResolvedSource.Git; g != nil && !seen[repoRef{g.URL, g.Commit}] {
			seen[repoRef{g.URL, g.Commit}] = true
			refs = append(refs, repoRef{g.URL, g.Commit})
		}
	}
	return refs
}
