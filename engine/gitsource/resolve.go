package gitsource

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/storage/memory"
)

// Resolve returns the full commit SHA that ref names on the remote at url,
// by listing the remote's refs (ls-remote); nothing is cloned or cached.
//
// ref may be empty or "HEAD" (the default branch), a branch, a tag (light or
// annotated; annotated tags are peeled to their commit), a full ref name
// (refs/…), a full commit SHA (returned as is, without touching the network,
// as the original tool does) or an abbreviated SHA of a branch or tag tip. An
// unknown ref is E_GIT_REF_NOT_FOUND naming up to 5 existing refs; a remote
// that cannot be listed is E_GIT_FETCH_FAILED, or E_NETWORK after
// opt.Retries retries.
func Resolve(ctx context.Context, url, ref string, opt FetchOptions) (string, error) {
	u, err := NormalizeURL(url)
	if err != nil {
		return "", err
	}
	if isFullSHA(ref) {
		return strings.ToLower(ref), nil
	}
	opt = opt.withDefaults()
	refs, err := listRefs(ctx, u, opt, apperr.GitFetchFailed)
	if err != nil {
		return "", err
	}
	m, ok := refs.match(ref)
	if !ok {
		return "", refs.notFound(u, ref)
	}
	if m.commit == "" {
		return "", refs.notFound(u, ref).WithHint("an abbreviated SHA resolves without a clone only when it is a branch or tag tip; give the full 40-character SHA")
	}
	return m.commit, nil
}

// remoteRefs is the result of listing a remote.
type remoteRefs struct {
	hashes   map[plumbing.ReferenceName]plumbing.Hash
	peeled   map[plumbing.ReferenceName]plumbing.Hash
	symbolic map[plumbing.ReferenceName]plumbing.ReferenceName
}

// match is a resolved ref: the commit it points to (empty when only a full
// fetch can tell, for an abbreviated SHA) and the remote ref to fetch (empty
// for a commit SHA).
type match struct {
	commit string
	ref    plumbing.ReferenceName
	prefix string
}

func listRefs(ctx context.Context, u string, opt FetchOptions, code apperr.Code) (*remoteRefs, error) {
	rem := git.NewRemote(memory.NewStorage(), &config.RemoteConfig{Name: "origin", URLs: []string{u}})
	var list []*plumbing.Reference
	err := retry(ctx, opt, "listing refs of "+u, func(ctx context.Context) error {
		var err error
		list, err = rem.ListContext(ctx, &git.ListOptions{PeelingOption: git.AppendPeeled})
		return err
	})
	if errors.Is(err, transport.ErrEmptyRemoteRepository) {
		return &remoteRefs{}, nil
	}
	if err != nil {
		return nil, remoteError(err, code, u, opt.Retries, "cannot list refs of %s", u)
	}
	r := &remoteRefs{
		hashes:   map[plumbing.ReferenceName]plumbing.Hash{},
		peeled:   map[plumbing.ReferenceName]plumbing.Hash{},
		symbolic: map[plumbing.ReferenceName]plumbing.ReferenceName{},
	}
	for _, ref := range list {
		name := ref.Name()
		switch {
		case ref.Type() == plumbing.SymbolicReference:
			r.symbolic[name] = ref.Target()
		case strings.HasSuffix(name.String(), "^{}"):
			r.peeled[plumbing.ReferenceName(strings.TrimSuffix(name.String(), "^{}"))] = ref.Hash()
		default:
			r.hashes[name] = ref.Hash()
		}
	}
	return r, nil
}

// commitOf returns the peeled hash of a listed ref.
func (r *remoteRefs) commitOf(name plumbing.ReferenceName) (string, bool) {
	if h, ok := r.peeled[name]; ok {
		return h.String(), true
	}
	if h, ok := r.hashes[name]; ok {
		return h.String(), true
	}
	return "", false
}

// match resolves ref against the listing: HEAD, then a full ref name, then a
// branch, then a tag (a branch wins over a tag of the same name, as with the
// original tool), then a SHA.
func (r *remoteRefs) match(ref string) (match, bool) {
	if ref == "" || ref == "HEAD" {
		name := plumbing.HEAD
		if t, ok := r.symbolic[plumbing.HEAD]; ok {
			name = t
		}
		if c, ok := r.commitOf(name); ok {
			return match{commit: c, ref: name}, true
		}
		return match{}, false
	}
	var candidates []plumbing.ReferenceName
	if strings.HasPrefix(ref, "refs/") {
		candidates = append(candidates, plumbing.ReferenceName(ref))
	}
	candidates = append(candidates, plumbing.NewBranchReferenceName(ref), plumbing.NewTagReferenceName(ref))
	for _, name := range candidates {
		if t, ok := r.symbolic[name]; ok {
			name = t
		}
		if c, ok := r.commitOf(name); ok {
			return match{commit: c, ref: name}, true
		}
	}
	if isFullSHA(ref) {
		return match{commit: strings.ToLower(ref)}, true
	}
	if isHexPrefix(ref) {
		p := strings.ToLower(ref)
		for _, name := range r.names() {
			if c, _ := r.commitOf(name); strings.HasPrefix(c, p) {
				return match{commit: c, ref: name}, true
			}
		}
		return match{prefix: p}, true
	}
	return match{}, false
}

// names returns the branch and tag names, branches first, each sorted.
func (r *remoteRefs) names() []plumbing.ReferenceName {
	var branches, tags []plumbing.ReferenceName
	for name := range r.hashes {
		switch {
		case name.IsBranch():
			branches = append(branches, name)
		case name.IsTag():
			tags = append(tags, name)
		}
	}
	slices.Sort(branches)
	slices.Sort(tags)
	return append(branches, tags...)
}

// notFound is E_GIT_REF_NOT_FOUND listing up to 5 existing refs.
func (r *remoteRefs) notFound(u, ref string) *apperr.Error {
	var short []string
	for _, n := range r.names() {
		short = append(short, n.Short())
	}
	listed := "the remote has no branches or tags"
	if len(short) > 0 {
		shown := short[:min(5, len(short))]
		listed = "existing refs: " + strings.Join(shown, ", ")
		if more := len(short) - len(shown); more > 0 {
			listed += fmt.Sprintf(" (and %d more)", more)
		}
	}
	return apperr.New(apperr.GitRefNotFound, "ref %q not found in %s; %s", ref, u, listed).
		WithHint("pass an existing branch, tag or full 40-character commit SHA").
		With("url", u).
		With("ref", ref).
		With("available_refs", short[:min(20, len(short))])
}

func isFullSHA(s string) bool { return len(s) == 40 && isHex(s) }

func isHexPrefix(s string) bool { return len(s) >= 4 && len(s) < 40 && isHex(s) }

func isHex(s string) bool {
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return s != ""
}
