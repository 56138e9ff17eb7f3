package engine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"

	"github.com/agentpack/agentpack/engine/gitsource"
	"github.com/agentpack/agentpack/engine/lockfile"
	"github.com/agentpack/agentpack/internal/apperr"
)

// checkGitCache verifies the cached checkouts that req's repo uses (the
// commits its lockfile and its artifact sources pin). A damaged one fails
// the check; with fix it is downloaded again, or, when that fails (no
// network), removed so that the next `fetch` downloads it. It runs before
// the state lock is taken: the cache is content-addressed and never needs
// it. A repo without git pins adds no check.
func (e *Engine) checkGitCache(ctx context.Context, req Request, fix bool, d *DoctorData) []DoctorCheck {
	m, repo, err := e.LoadManifest(ctx, req)
	if err != nil {
		return nil // the manifest check reports it
	}
	seen := map[repoRef]bool{}
	var pins []repoRef
	if lf, err := lockfile.LoadOn(e.Sys, abs(filepath.Join(repo, lockfile.FileName))); err == nil {
		for _, r := range pinnedRefs(lf) {
			seen[r] = true
			pins = append(pins, r)
		}
	}
	for _, s := range m.Sources {
		if r := (repoRef{s.URL, s.Commit}); s.Commit != "" && !seen[r] {
			seen[r] = true
			pins = append(pins, r)
		}
	}
	if len(pins) == 0 {
		return nil
	}
	sort.Slice(pins, func(i, j int) bool { return pins[i].url+pins[i].ref < pins[j].url+pins[j].ref })
	var damaged []string
	cached := 0
	for _, p := range pins {
		dir, err := e.GitCache().Dir(p.url, p.ref)
		switch {
		case err == nil:
			cached++
			continue
		case errors.Is(err, gitsource.ErrNotCached):
			continue
		case apperr.CodeOf(err) != apperr.CacheCorrupted:
			return []DoctorCheck{{Name: "git cache", Status: CheckFail, Message: apperr.As(err).Message, Suggestion: apperr.As(err).Hint}}
		}
		if dir, _ = e.GitCache().Path(p.url, p.ref); !fix {
			damaged = append(damaged, dir)
			continue
		}
		if _, rerr := e.repair(ctx, p.url, p.ref); rerr == nil {
			d.Fixed = append(d.Fixed, fmt.Sprintf("downloaded the damaged git cache checkout %s again", dir))
			cached++
		} else if everr := e.GitCache().Evict(p.url, p.ref); everr == nil {
			d.Fixed = append(d.Fixed, fmt.Sprintf("removed the damaged git cache checkout %s (downloading it again failed: %s); `agentpack fetch` downloads it", dir, apperr.As(rerr).Message))
		} else {
			damaged = append(damaged, dir)
		}
	}
	e.takeRepairs() // doctor reports its repairs as fixes
	if len(damaged) > 0 {
		return []DoctorCheck{{Name: "git cache", Status: CheckFail,
			Message:    fmt.Sprintf("%d damaged checkout(s): %v", len(damaged), damaged),
			Suggestion: "run `agentpack doctor --fix` (or `agentpack fetch`) to download them again"}}
	}
	return []DoctorCheck{{Name: "git cache", Status: CheckPass, Message: fmt.Sprintf("%d of %d pinned checkout(s) cached and intact", cached, len(pins))}}
}
