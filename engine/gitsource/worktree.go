package gitsource

import (
	"errors"
	"io/fs"
	"sort"
	"strings"
	"time"

	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// WorkTree is a git work tree agentpack commits to (the desired-state repo
// of `evolve propose`). Only go-git writes to it, and only objects and
// branch refs: [WorkTree.CommitBranch] builds a commit from trees in
// memory, so the checked-out branch, the index and the work tree files are
// never touched.
type WorkTree struct {
	// Top is the work tree's top folder.
	Top  fsys.AbsPath
	repo *git.Repository
}

// OpenWorkTree opens the git work tree holding dir (its own or a parent's
// .git); ok=false when dir is in no git work tree.
func OpenWorkTree(dir fsys.AbsPath) (w *WorkTree, ok bool, err error) {
	repo, err := git.PlainOpenWithOptions(dir.String(), &git.PlainOpenOptions{DetectDotGit: true, EnableDotGitCommonDir: true})
	if errors.Is(err, git.ErrRepositoryNotExists) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	wt, err := repo.Worktree()
	if err != nil {
		return nil, false, err
	}
	return &WorkTree{Top: fsys.AbsPath(wt.Filesystem.Root()), repo: repo}, true, nil
}

// Changes lists the paths `git status --porcelain` would print (modified,
// staged and untracked files, ignored ones left out), sorted.
func (w *WorkTree) Changes() ([]string, error) {
	wt, err := w.repo.Worktree()
	if err != nil {
		return nil, err
	}
	st, err := wt.Status()
	if err != nil {
		return nil, err
	}
	var out []string
	for p, s := range st {
		if s.Staging != git.Unmodified || s.Worktree != git.Unmodified {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out, nil
}

// HasBranch reports whether refs/heads/name exists.
func (w *WorkTree) HasBranch(name string) bool {
	_, err := w.repo.Reference(plumbing.NewBranchReferenceName(name), false)
	return err == nil
}

// ValidBranchName reports whether name can be a branch.
func ValidBranchName(name string) bool {
	return name != "" && plumbing.NewBranchReferenceName(name).Validate() == nil && !strings.ContainsAny(name, " ~^:?*[\\")
}

// BlobFile is one file of a commit: its bytes and whether it is executable.
type BlobFile struct {
	Data       []byte
	Executable bool
}

// CommitBranch creates branch at a new commit whose parent is HEAD (none in
// a repo without commits) and whose tree is HEAD's with files (paths from
// Top, '/'-separated) written over it. It returns the commit id.
func (w *WorkTree) CommitBranch(branch, message string, files map[string]BlobFile, now time.Time) (string, error) {
	var parents []plumbing.Hash
	var base *object.Tree
	head, err := w.repo.Head()
	switch {
	case errors.Is(err, plumbing.ErrReferenceNotFound):
	case err != nil:
		return "", err
	default:
		c, err := w.repo.CommitObject(head.Hash())
		if err != nil {
			return "", err
		}
		if base, err = c.Tree(); err != nil {
			return "", err
		}
		parents = []plumbing.Hash{c.Hash}
	}
	changes := map[string]BlobFile{}
	for p, f := range files {
		changes[p] = f
	}
	tree, err := w.writeTree(base, changes)
	if err != nil {
		return "", err
	}
	sig := w.signature(now)
	c := &object.Commit{Author: sig, Committer: sig, Message: message, TreeHash: tree, ParentHashes: parents}
	id, err := w.store(c)
	if err != nil {
		return "", err
	}
	ref := plumbing.NewHashReference(plumbing.NewBranchReferenceName(branch), id)
	if err := w.repo.Storer.CheckAndSetReference(ref, nil); err != nil {
		return "", err
	}
	return id.String(), nil
}

// writeTree stores the tree of base with changes (paths relative to it)
// written over it, and returns its id.
func (w *WorkTree) writeTree(base *object.Tree, changes map[string]BlobFile) (plumbing.Hash, error) {
	entries := map[string]object.TreeEntry{}
	if base != nil {
		for _, e := range base.Entries {
			entries[e.Name] = e
		}
	}
	sub := map[string]map[string]BlobFile{}
	for p, f := range changes {
		first, rest, nested := strings.Cut(p, "/")
		if !nested {
			blob := &plumbing.MemoryObject{}
			blob.SetType(plumbing.BlobObject)
			if _, err := blob.Write(f.Data); err != nil {
				return plumbing.ZeroHash, err
			}
			h, err := w.repo.Storer.SetEncodedObject(blob)
			if err != nil {
				return plumbing.ZeroHash, err
			}
			mode := filemode.Regular
			if f.Executable {
				mode = filemode.Executable
			}
			entries[first] = object.TreeEntry{Name: first, Mode: mode, Hash: h}
			continue
		}
		if sub[first] == nil {
			sub[first] = map[string]BlobFile{}
		}
		sub[first][rest] = f
	}
	for name, ch := range sub {
		var child *object.Tree
		if e, ok := entries[name]; ok && e.Mode == filemode.Dir {
			t, err := w.repo.TreeObject(e.Hash)
			if err != nil {
				return plumbing.ZeroHash, err
			}
			child = t
		}
		h, err := w.writeTree(child, ch)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		entries[name] = object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h}
	}
	t := &object.Tree{}
	for _, e := range entries {
		t.Entries = append(t.Entries, e)
	}
	// Git orders entries by name, a folder's name as if it ended in '/'.
	key := func(e object.TreeEntry) string {
		if e.Mode == filemode.Dir {
			return e.Name + "/"
		}
		return e.Name
	}
	sort.Slice(t.Entries, func(i, j int) bool { return key(t.Entries[i]) < key(t.Entries[j]) })
	return w.store(t)
}

// store encodes and saves a tree or a commit.
func (w *WorkTree) store(o interface {
	Encode(plumbing.EncodedObject) error
}) (plumbing.Hash, error) {
	obj := w.repo.Storer.NewEncodedObject()
	if err := o.Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	return w.repo.Storer.SetEncodedObject(obj)
}

// signature is the user git would commit as (the repo's config, then the
// user's), or agentpack when neither names one.
func (w *WorkTree) signature(now time.Time) object.Signature {
	sig := object.Signature{Name: "agentpack", Email: "agentpack@localhost", When: now}
	for _, scope := range []config.Scope{config.GlobalScope, config.LocalScope} {
		cfg, err := w.repo.ConfigScoped(scope)
		if err != nil {
			continue
		}
		if cfg.User.Name != "" {
			sig.Name = cfg.User.Name
		}
		if cfg.User.Email != "" {
			sig.Email = cfg.User.Email
		}
	}
	return sig
}

// IsExecutable reports whether mode has an execute bit (git records only
// that of a file's permissions).
func IsExecutable(mode fs.FileMode) bool { return mode&0o111 != 0 }
