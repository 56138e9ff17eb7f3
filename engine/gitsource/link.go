package gitsource

import (
	"encoding/json"
	"errors"
	"io/fs"

	"github.com/agentpack/agentpack/internal/fsys"
)

// Link is a symlink of a git tree.
type Link struct {
	// Path is where the link is, '/'-separated below the checkout's root.
	Path string `json:"path"`
	// Target is the text of the link, as git stores it.
	Target string `json:"target"`
}

// CheckoutInfo describes the cached checkout that holds a path.
type CheckoutInfo struct {
	// Dir is the checkout's folder.
	Dir string
	// LinksLeftOut are the symlinks of the commit that the checkout lacks
	// because they are absolute, dangle, or lead out of the checkout (or
	// could not be created): the cache never holds a link that leads out
	// of it. They are recorded in the marker so that loading a module
	// that holds one fails, as it would for a local folder, instead of
	// the link vanishing silently. Checkouts made before this was
	// recorded list none.
	LinksLeftOut []Link
}

// FindCheckout returns the complete cached checkout that holds path (an
// absolute path, taken as written: links in it are not resolved), or nil
// when path is in none. A checkout is recognised by the cache's layout,
// <sha256(url)>/<commit>/, and its marker; nothing else is read, so a path
// outside any cache costs no I/O. An unreadable marker is E_CACHE_CORRUPTED.
func FindCheckout(path string) (*CheckoutInfo, error) {
	return findCheckout(defaultSystem, path)
}

// findCheckout is [FindCheckout] through sys.
func findCheckout(sys fsys.System, path string) (*CheckoutInfo, error) {
	p, err := fsys.NewAbsPath(path)
	if err != nil {
		return nil, err
	}
	for ; p.Dir() != p; p = p.Dir() {
		if !isFullSHA(p.Base()) || !isURLKeyName(p.Dir().Base()) {
			continue
		}
		raw, err := sys.ReadFile(p.JoinName(MarkerFile))
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, corrupted(p.String(), err, "cannot read the checkout marker")
		}
		var mk marker
		if err := json.Unmarshal(raw, &mk); err != nil {
			return nil, corrupted(p.String(), err, "unreadable checkout marker")
		}
		return &CheckoutInfo{Dir: p.String(), LinksLeftOut: mk.LinksLeftOut}, nil
	}
	return nil, nil
}

// isURLKeyName reports whether name could be a [URLKey].
func isURLKeyName(name string) bool {
	return len(name) == 64 && isHex(name)
}
