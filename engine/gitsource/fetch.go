package gitsource

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
)

// wantRef is where a fetch stores the ref or commit it was asked for.
const wantRef = "refs/agentpack/want"

// tmpPrefix names the temporary folders of fetches in progress; those older
// than staleAfter were left by a process that died and are removed.
const (
	tmpPrefix  = ".fetch-"
	staleAfter = 24 * time.Hour
)

// removeStale removes the temporary folders in base older than age. A
// folder whose System reports no modification time (an in-memory one) is
// left alone: it may belong to a fetch still running.
func removeStale(sys fsys.System, base fsys.AbsPath, age time.Duration) {
	entries, err := sys.ReadDir(base)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), tmpPrefix) {
			continue
		}
		if info, err := e.Info(); err == nil && !info.ModTime().IsZero() && time.Since(info.ModTime()) > age {
			_ = sys.RemoveAll(base.JoinName(e.Name()))
		}
	}
}

// makeTemp creates a new, empty temporary folder in base.
func makeTemp(sys fsys.System, base fsys.AbsPath) (fsys.AbsPath, error) {
	tmp, err := freeTemp(sys, base)
	if err != nil {
		return "", err
	}
	return tmp, sys.MkdirAll(tmp, 0o755)
}

// freeTemp returns a temporary name in base that nothing holds yet.
func freeTemp(sys fsys.System, base fsys.AbsPath) (fsys.AbsPath, error) {
	for range 3 {
		// Over 128 random bits: another process picking the same name at
		// the same moment is not a concern, so checking that the name is
		// free is enough.
		tmp := base.JoinName(tmpPrefix + rand.Text())
		_, err := sys.Lstat(tmp)
		if errors.Is(err, fs.ErrNotExist) {
			return tmp, nil
		}
		if err != nil {
			return "", err
		}
	}
	return "", apperr.New(apperr.IOFailed, "cannot find a free temporary folder name in %s", base).With("path", base.String())
}

// errCommitNotFound means the fetched objects lack the wanted commit.
var errCommitNotFound = errors.New("commit not found on the remote")

// strategy is one way of fetching: a shallow fetch of one ref or commit, or
// a full fetch of every branch and tag.
type strategy struct {
	refspecs []config.RefSpec
	depth    int
}

func strategies(u string, m match) []strategy {
	full := strategy{refspecs: []config.RefSpec{
		"+refs/heads/*:refs/remotes/origin/*",
		"+refs/tags/*:refs/tags/*",
	}}
	var want config.RefSpec
	switch {
	case m.ref != "":
		want = config.RefSpec("+" + m.ref.String() + ":" + wantRef)
		full.refspecs = append(full.refspecs, want)
	case m.commit != "":
		want = config.RefSpec(m.commit + ":" + wantRef)
	}
	// Local repositories are read in place, so a shallow copy saves nothing
	// (and go-git's in-process server cannot produce one).
	if want == "" || isLocalURL(u) {
		return []strategy{full}
	}
	return []strategy{{refspecs: []config.RefSpec{want}, depth: 1}, full}
}

func isLocalURL(u string) bool {
	return strings.HasPrefix(strings.ToLower(u), "file:") || filepath.IsAbs(u)
}

// fetch downloads m from u into memory, writes the work tree of its commit
// into a temporary folder under the URL's cache folder and installs it. A
// verified checkout already in place is returned as it is unless replace is
// set; a corrupted one is replaced by the new download. Whatever happens,
// the temporary folder is removed, and so is the URL's folder if it is
// empty.
func (c *Cache) fetch(ctx context.Context, u string, m match, opt FetchOptions, replace bool) (string, string, error) {
	root, err := c.root()
	if err != nil {
		return "", "", err
	}
	sys, base := c.sys(), root.JoinName(URLKey(u))
	var commit *object.Commit
	for _, st := range strategies(u, m) {
		var repo *git.Repository
		repo, err = fetchInto(ctx, u, st, opt)
		if err == nil {
			commit, err = findCommit(repo, m)
		}
		if err == nil || !fallback(err) {
			break
		}
	}
	if err != nil {
		if errors.Is(err, errCommitNotFound) {
			want := m.commit + m.prefix
			if m.ref != "" {
				want = m.ref.Short()
			}
			return "", "", apperr.Wrap(err, apperr.GitRefNotFound, "%s not found in %s", want, u).
				WithHint("check that the commit exists on a branch or tag of the remote").
				With("url", u).With("ref", want)
		}
		return "", "", remoteError(err, apperr.GitCloneFailed, u, opt.Retries, "cannot fetch %s", u)
	}

	sha := commit.Hash.String()
	if !replace {
		dir, err := c.Dir(u, sha)
		switch {
		case err == nil:
			return sha, dir, nil
		case !errors.Is(err, ErrNotCached) && !isCorrupted(err):
			return "", "", err
		}
	}
	if err := sys.MkdirAll(base, 0o755); err != nil {
		return "", "", err
	}
	defer sys.Remove(base) // succeeds only when nothing was installed
	removeStale(sys, base, staleAfter)
	tmp, err := makeTemp(sys, base)
	if err != nil {
		return "", "", err
	}
	defer sys.RemoveAll(tmp)
	tree := tmp.JoinName("tree")
	left, err := materialise(sys, commit, tree)
	if err != nil {
		return "", "", err
	}
	dir, err := c.install(u, sha, tree, left, opt, replace)
	if err != nil {
		return "", "", err
	}
	return sha, dir, nil
}

// fallback reports whether a failed strategy is worth following with the
// next one: not for network, credential or missing-repository failures,
// which a full fetch would hit again.
func fallback(err error) bool {
	return !isNetwork(err) && !errors.Is(err, context.Canceled) && !anyCause(err, func(e error) bool {
		return errors.Is(e, transport.ErrRepositoryNotFound) || errors.Is(e, transport.ErrAuthenticationRequired) ||
			errors.Is(e, transport.ErrAuthorizationFailed) || errors.Is(e, transport.ErrInvalidAuthMethod)
	})
}

// fetchInto fetches st from u into a fresh bare repository in memory: the
// objects never touch the disk, only the work tree [materialise] writes.
func fetchInto(ctx context.Context, u string, st strategy, opt FetchOptions) (*git.Repository, error) {
	var repo *git.Repository
	err := retry(ctx, opt, "fetching "+u, func(ctx context.Context) error {
		r, err := git.Init(memory.NewStorage(), nil)
		if err != nil {
			return err
		}
		rem, err := r.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{u}, Fetch: st.refspecs})
		if err != nil {
			return err
		}
		err = rem.FetchContext(ctx, &git.FetchOptions{
			RemoteName: "origin",
			RefSpecs:   st.refspecs,
			Depth:      st.depth,
			Tags:       git.NoTags,
			Progress:   opt.Progress,
		})
		if errors.Is(err, git.NoErrAlreadyUpToDate) {
			err = nil
		}
		repo = r
		return err
	})
	return repo, err
}

// findCommit returns the commit m names among the fetched objects. If the
// remote ref moved between listing and fetching, the ref's new commit is
// used: it is what the ref names now.
func findCommit(repo *git.Repository, m match) (*object.Commit, error) {
	if m.prefix != "" {
		h, err := repo.ResolveRevision(plumbing.Revision(m.prefix))
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", errCommitNotFound, m.prefix, err)
		}
		return commitOf(repo, *h)
	}
	c, err := commitOf(repo, plumbing.NewHash(m.commit))
	if err == nil || m.ref == "" {
		return c, err
	}
	ref, rerr := repo.Reference(wantRef, true)
	if rerr != nil {
		return nil, err
	}
	return commitOf(repo, ref.Hash())
}

// commitOf peels tags from h down to a commit.
func commitOf(repo *git.Repository, h plumbing.Hash) (*object.Commit, error) {
	for range 32 {
		tag, err := repo.TagObject(h)
		if err != nil {
			break
		}
		h = tag.Target
	}
	c, err := repo.CommitObject(h)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", errCommitNotFound, h)
	}
	return c, nil
}

// Modes of the files of a checkout: read-only, so that an editor warns
// before changing the cache (verification still catches an edit made
// anyway). Folders stay writable: eviction, and any `rm -rf` of the cache,
// must be able to delete what they hold.
const (
	fileMode = 0o444
	execMode = 0o555
)

// materialise writes the files of commit's tree into dir through sys:
// read-only regular files ([fileMode], [execMode]), and symlinks only when
// they resolve to something inside dir. The others are left out, since
// nothing may follow them out of the cache, and returned so that the marker
// can record them and the module loader refuse a module holding one.
// Submodules are not fetched. A root file named [MarkerFile] is left out.
func materialise(sys fsys.System, commit *object.Commit, dir fsys.AbsPath) ([]Link, error) {
	tree, err := commit.Tree()
	if err != nil {
		return nil, apperr.Wrap(err, apperr.GitCloneFailed, "read tree of %s", commit.Hash)
	}
	if err := sys.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var links []Link
	err = tree.Files().ForEach(func(f *object.File) error {
		if skip, err := checkTreePath(f.Name); skip || err != nil {
			return err
		}
		rel, err := fsys.NewRelPath(f.Name)
		if err != nil {
			return err
		}
		dst := dir.Join(rel)
		switch f.Mode {
		case filemode.Symlink:
			target, err := f.Contents()
			links = append(links, Link{Path: f.Name, Target: target})
			return err
		case filemode.Executable:
			return writeBlob(sys, f, dst, execMode)
		case filemode.Regular, filemode.Deprecated:
			return writeBlob(sys, f, dst, fileMode)
		}
		return sys.MkdirAll(dst.Dir(), 0o755)
	})
	var ae *apperr.Error
	if errors.As(err, &ae) {
		return nil, err // an I/O failure of sys, already explained
	}
	if err != nil {
		return nil, apperr.Wrap(err, apperr.GitCloneFailed, "write checkout of %s", commit.Hash)
	}
	return placeLinks(sys, dir, links)
}

// checkTreePath refuses paths that would escape the checkout and skips
// .git entries and the root marker.
func checkTreePath(name string) (skip bool, err error) {
	if name == MarkerFile {
		return true, nil
	}
	if strings.ContainsAny(name, "\x00\\") || strings.HasPrefix(name, "/") {
		return false, fmt.Errorf("unsafe path %q in git tree", name)
	}
	for seg := range strings.SplitSeq(name, "/") {
		switch {
		case seg == "" || seg == "." || seg == "..":
			return false, fmt.Errorf("unsafe path %q in git tree", name)
		case strings.EqualFold(seg, ".git"):
			return true, nil
		}
	}
	return false, nil
}

// writeBlob writes the contents of f to dst through sys, creating its
// folders.
func writeBlob(sys fsys.System, f *object.File, dst fsys.AbsPath, mode fs.FileMode) error {
	r, err := f.Reader()
	if err != nil {
		return err
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	return sys.WriteFile(dst, data, mode)
}

// placeLinks creates the relative symlinks whose targets stay inside dir,
// then removes, until none is left, any that dangle or resolve outside dir
// (through other links). It returns the links it left out, sorted by path.
func placeLinks(sys fsys.System, dir fsys.AbsPath, links []Link) ([]Link, error) {
	var placed, left []Link
	for _, l := range links {
		target := l.Target
		if target == "" || strings.HasPrefix(target, "/") || filepath.IsAbs(target) || strings.ContainsRune(target, 0) {
			left = append(left, l)
			continue
		}
		if j := path.Join(path.Dir(l.Path), target); j == ".." || strings.HasPrefix(j, "../") {
			left = append(left, l)
			continue
		}
		dst := dir.Join(fsys.RelPath(l.Path))
		if sys.MkdirAll(dst.Dir(), 0o755) == nil && sys.Symlink(filepath.FromSlash(target), dst) == nil {
			placed = append(placed, l)
		} else {
			left = append(left, l)
		}
	}
	for changed := true; changed; {
		changed = false
		for i, l := range placed {
			if l.Path == "" {
				continue
			}
			if _, err := evalBelow(sys, dir, l.Path); err != nil {
				if err := sys.Remove(dir.Join(fsys.RelPath(l.Path))); err != nil {
					return nil, err
				}
				left = append(left, l)
				placed[i], changed = Link{}, true
			}
		}
	}
	slices.SortFunc(left, func(a, b Link) int { return strings.Compare(a.Path, b.Path) })
	return left, nil
}
