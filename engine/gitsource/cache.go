package gitsource

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/agentpack/agentpack/engine/lockfile"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
)

// MarkerFile is the file written last into every complete checkout.
const MarkerFile = lockfile.TreeMarker

// ErrNotCached is the cause of the error [Cache.Dir] returns for a checkout
// that is absent or incomplete; match it with errors.Is.
var ErrNotCached = errors.New("git checkout not in cache")

// Cache is the immutable git checkout cache: Root/<sha256(url)>/<commit>/
// holds the work tree of one commit (no .git folder) and [MarkerFile].
type Cache struct {
	// Root is $AGENTPACK_HOME/cache/git, an absolute path.
	Root string
	// System reads and writes the cache, and reads local (file://)
	// repositories; nil means the real filesystem.
	System fsys.System
}

// defaultSystem is the System of a [Cache] without one.
var defaultSystem fsys.System = fsys.NewRealSystem(fsys.RealSystemOptions{})

// sys returns the System c reads and writes through.
func (c *Cache) sys() fsys.System {
	if c.System != nil {
		return c.System
	}
	return defaultSystem
}

// root returns Root as an absolute path.
func (c *Cache) root() (fsys.AbsPath, error) {
	if c.Root == "" {
		return "", apperr.New(apperr.InvalidArgument, "git cache root is not set")
	}
	if !filepath.IsAbs(c.Root) {
		return "", apperr.New(apperr.InvalidArgument, "git cache root %q is not an absolute path", c.Root).With("path", c.Root)
	}
	return fsys.NewAbsPath(c.Root)
}

// marker is the content of [MarkerFile]. LinksLeftOut is absent from the
// markers of checkouts made before it was recorded.
type marker struct {
	URL          string `json:"url"`
	Commit       string `json:"commit"`
	TreeSHA256   string `json:"tree_sha256"`
	LinksLeftOut []Link `json:"links_left_out,omitempty"`
}

// URLKey is the cache folder name of a (normalised) URL: hex sha256 of it,
// as the original tool computes it.
func URLKey(url string) string {
	sum := sha256.Sum256([]byte(url))
	return hex.EncodeToString(sum[:])
}

// Path returns where the checkout of (url, commit) lives, whether or not it
// exists.
func (c *Cache) Path(url, commit string) (string, error) {
	u, err := NormalizeURL(url)
	if err != nil {
		return "", err
	}
	if !isFullSHA(commit) {
		return "", apperr.New(apperr.InvalidArgument, "%q is not a full 40-character commit SHA", commit).With("commit", commit)
	}
	root, err := c.root()
	if err != nil {
		return "", err
	}
	return root.JoinName(URLKey(u)).JoinName(strings.ToLower(commit)).String(), nil
}

// Checkout returns the full commit SHA that ref names at url and the cached
// checkout of it, fetching it first when it is absent or incomplete.
//
// ref is resolved as by [Resolve]; an abbreviated SHA that is no branch or
// tag tip is looked up after a full fetch. A cached full-SHA checkout is
// returned without touching the network; any other ref lists the remote
// first. Fetches are shallow when the remote allows it (not for file:// and
// local paths, which are copied in full) and fall back to a full fetch. The
// checkout is written to a temporary folder next to its final place, its
// marker last, and renamed into place, so no partial checkout is ever
// visible; on failure nothing is left behind. Its files are read-only.
//
// Checkout repairs: a checkout in place that fails verification
// (E_CACHE_CORRUPTED from [Cache.Dir]) is downloaded again, and the damaged
// copy is evicted just before the fresh one is renamed into place, then
// reported to [FetchOptions.OnRepair]. If the download fails, the damaged
// copy stays and the download's error is returned. Reading paths should
// call [Cache.Dir], which refuses a corrupted checkout and never repairs.
func (c *Cache) Checkout(ctx context.Context, url, ref string, opt FetchOptions) (commit, dir string, err error) {
	u, err := NormalizeURL(url)
	if err != nil {
		return "", "", err
	}
	if _, err := c.root(); err != nil {
		return "", "", err
	}
	ctx = withSystem(ctx, c.sys())
	opt = opt.withDefaults()
	m := match{commit: strings.ToLower(ref)}
	if !isFullSHA(ref) {
		refs, err := listRefs(ctx, u, opt, apperr.GitCloneFailed)
		if err != nil {
			return "", "", err
		}
		var ok bool
		if m, ok = refs.match(ref); !ok {
			return "", "", refs.notFound(u, ref)
		}
	}
	if m.commit != "" {
		dir, err := c.Dir(u, m.commit)
		if err == nil {
			return m.commit, dir, nil
		}
		if !errors.Is(err, ErrNotCached) && !isCorrupted(err) {
			return "", "", err
		}
	}
	return c.fetch(ctx, u, m, opt, false)
}

// Dir returns the cached checkout of (url, commit) after checking that its
// files still hash to the value recorded in its marker. It never touches the
// network and never repairs. An absent or incomplete checkout is an
// E_SOURCE_NOT_FOUND error wrapping [ErrNotCached]; an edited one is
// E_CACHE_CORRUPTED, whose hint names `agentpack fetch`, which repairs it
// through [Cache.Checkout].
func (c *Cache) Dir(url, commit string) (string, error) {
	dir, err := c.Path(url, commit)
	if err != nil {
		return "", err
	}
	u, _ := NormalizeURL(url)
	commit = strings.ToLower(commit)
	raw, err := c.sys().ReadFile(fsys.AbsPath(dir).JoinName(MarkerFile))
	if errors.Is(err, fs.ErrNotExist) {
		return "", apperr.Wrap(ErrNotCached, apperr.SourceNotFound, "commit %s of %s is not in the git cache", commit, u).
			WithHint("run `agentpack fetch` to download it").
			With("url", u).With("commit", commit).With("path", dir)
	}
	if err != nil {
		return "", corrupted(dir, err, "cannot read the checkout marker")
	}
	var mk marker
	if err := json.Unmarshal(raw, &mk); err != nil {
		return "", corrupted(dir, err, "unreadable checkout marker")
	}
	if mk.URL != u || mk.Commit != commit {
		return "", corrupted(dir, nil, "checkout marker names "+mk.URL+"@"+mk.Commit)
	}
	files, err := hashTree(c.sys(), fsys.AbsPath(dir))
	if err != nil {
		return "", corrupted(dir, err, "cannot hash the checkout")
	}
	if got := lockfile.ModuleHash(files); got != mk.TreeSHA256 {
		return "", corrupted(dir, nil, "files were changed after download").
			With("expected", mk.TreeSHA256).With("actual", got)
	}
	return dir, nil
}

// corrupted is the E_CACHE_CORRUPTED error of the checkout dir.
func corrupted(dir string, cause error, why string) *apperr.Error {
	e := apperr.New(apperr.CacheCorrupted, "git cache entry %s is corrupted: %s", dir, why)
	if cause != nil {
		e = apperr.Wrap(cause, apperr.CacheCorrupted, "git cache entry %s is corrupted: %s", dir, why)
	}
	return e.WithHint("run `agentpack fetch`: it downloads the commit again and replaces the damaged copy").With("path", dir)
}

// isCorrupted reports whether err is an E_CACHE_CORRUPTED error.
func isCorrupted(err error) bool { return apperr.CodeOf(err) == apperr.CacheCorrupted }

// install writes the marker (recording the links left out of the tree)
// into the finished tree and renames it into place. A complete, verified
// checkout that appeared meanwhile (another process) is kept, unless
// replace is set; a corrupted one is evicted and replaced.
func (c *Cache) install(u, commit string, tree fsys.AbsPath, left []Link, opt FetchOptions, replace bool) (string, error) {
	sys := c.sys()
	files, err := hashTree(sys, tree)
	if err != nil {
		return "", apperr.Wrap(err, apperr.GitCloneFailed, "hash checkout of %s@%s", u, commit)
	}
	mk := marker{URL: u, Commit: commit, TreeSHA256: lockfile.ModuleHash(files), LinksLeftOut: left}
	raw, err := json.MarshalIndent(mk, "", "  ")
	if err != nil {
		return "", apperr.Wrap(err, apperr.Unexpected, "encode checkout marker")
	}
	if err := sys.WriteFile(tree.JoinName(MarkerFile), append(raw, '\n'), fileMode); err != nil {
		return "", err
	}
	dir, err := c.Path(u, commit)
	if err != nil {
		return "", err
	}
	final := fsys.AbsPath(dir)
	for range 3 {
		if err = sys.Rename(tree, final); err == nil {
			return dir, nil
		}
		derr := c.dirErr(u, commit)
		switch {
		case derr == nil && !replace:
			return dir, nil
		case derr == nil || isCorrupted(derr):
			if err := c.evict(final, derr, opt); err != nil {
				return "", err
			}
			// Replace once: a checkout another process installs after
			// this eviction is as good as ours.
			replace = false
		case errors.Is(derr, ErrNotCached):
			// An incomplete leftover (or the original tool's checkout,
			// which has a .git folder and no marker) is in the way.
			if err := sys.RemoveAll(final); err != nil {
				return "", err
			}
		default:
			return "", derr
		}
	}
	return "", apperr.Wrap(err, apperr.IOFailed, "move checkout into %s", final)
}

// dirErr is the error [Cache.Dir] gives for (u, commit).
func (c *Cache) dirErr(u, commit string) error {
	_, err := c.Dir(u, commit)
	return err
}
