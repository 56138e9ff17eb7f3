package gitsource

import (
	"context"
	"errors"
	"io/fs"
	"strings"

	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
)

// Repair downloads commit of url again and puts the fresh checkout in place
// of the cached one, whatever state that one is in (verified, corrupted,
// incomplete or absent), and returns the checkout's folder. The old copy is
// evicted just before the new one is renamed into place and reported to
// [FetchOptions.OnRepair]; if the download fails, it stays where it is.
//
// [Cache.Checkout] already repairs a checkout that fails verification, so
// `fetch` and `update` need nothing more. Repair is for the case
// verification cannot see: a checkout whose files and marker were both
// changed, so that [Cache.VerifySubdir] disagrees with the lockfile while
// [Cache.Dir] passes. Call it once, then verify again; a second mismatch is
// a real difference between the lockfile and the commit.
func (c *Cache) Repair(ctx context.Context, url, commit string, opt FetchOptions) (string, error) {
	u, err := NormalizeURL(url)
	if err != nil {
		return "", err
	}
	if !isFullSHA(commit) {
		return "", apperr.New(apperr.InvalidArgument, "%q is not a full 40-character commit SHA", commit).With("commit", commit)
	}
	if _, err := c.root(); err != nil {
		return "", err
	}
	ctx = withSystem(ctx, c.sys())
	_, dir, err := c.fetch(ctx, u, match{commit: strings.ToLower(commit)}, opt.withDefaults(), true)
	return dir, err
}

// Evict removes the cached checkout of (url, commit), whatever state it is
// in; an absent checkout is not an error. It never touches the network.
// The checkout is first renamed to a temporary name, so a reader never sees
// half of it, then deleted; if the deletion fails, the renamed folder is
// removed by a later fetch like any stale temporary folder. It is what
// `doctor --fix` should call for a checkout that fails [Cache.Dir] when it
// does not want to download anything.
func (c *Cache) Evict(url, commit string) error {
	dir, err := c.Path(url, commit)
	if err != nil {
		return err
	}
	return c.evict(fsys.AbsPath(dir), nil, FetchOptions{})
}

// evict moves the checkout dir aside and deletes it, then reports it, with
// the verification error cause (nil when it was not damaged), to
// opt.OnRepair. A dir that is already gone is fine: another process evicted
// it first.
func (c *Cache) evict(dir fsys.AbsPath, cause error, opt FetchOptions) error {
	sys := c.sys()
	aside, err := freeTemp(sys, dir.Dir())
	if err != nil {
		return err
	}
	if err := sys.Rename(dir, aside); err != nil {
		if _, lerr := sys.Lstat(dir); errors.Is(lerr, fs.ErrNotExist) {
			return nil
		}
		return apperr.Wrap(err, apperr.CacheCorrupted, "cannot move the git cache entry %s out of the way", dir).
			WithHint("remove the folder by hand, then run the command again").With("path", dir.String())
	}
	// Files are read-only but their folders are not, so the tree can be
	// deleted as it is. A failure leaves a temporary folder that
	// removeStale deletes later; the cache itself is already repaired.
	_ = sys.RemoveAll(aside)
	if opt.OnRepair != nil {
		opt.OnRepair(dir.String(), cause)
	}
	return nil
}
