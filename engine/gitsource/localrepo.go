package gitsource

import (
	"bytes"
	"errors"
	"io"
	"path"

	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// LocalRepo reads the history of a local git work tree (such as the
// desired-state repo) through a System, without a git binary.
type LocalRepo struct {
	// Top is the work tree's top folder.
	Top  fsys.AbsPath
	repo *git.Repository
}

// OpenLocal opens the git work tree holding dir (its own or a parent's
// .git folder); ok=false when dir is in no git work tree.
func OpenLocal(sys fsys.System, dir fsys.AbsPath) (r *LocalRepo, ok bool, err error) {
	for top := dir; ; top = top.Dir() {
		if isDir(sys, top.JoinName(".git")) {
			st := filesystem.NewStorage(newBillyFS(sys, top.JoinName(".git")), cache.NewObjectLRUDefault())
			repo, err := git.Open(st, nil)
			if err != nil {
				return nil, false, err
			}
			return &LocalRepo{Top: top, repo: repo}, true, nil
		}
		if top.Dir() == top {
			return nil, false, nil
		}
	}
}

// Head is the commit HEAD names; "" in a repo without commits.
func (r *LocalRepo) Head() (string, error) {
	ref, err := r.repo.Head()
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return ref.Hash().String(), nil
}

// ReadFile returns the bytes of rel (a '/' path from Top) at commit;
// ok=false when the commit has no such file.
func (r *LocalRepo) ReadFile(commit, rel string) (data []byte, ok bool, err error) {
	c, err := r.repo.CommitObject(plumbing.NewHash(commit))
	if err != nil {
		return nil, false, err
	}
	f, err := c.File(path.Clean(rel))
	if errors.Is(err, object.ErrFileNotFound) || errors.Is(err, object.ErrDirectoryNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	rd, err := f.Reader()
	if err != nil {
		return nil, false, err
	}
	defer rd.Close()
	data, err = io.ReadAll(rd)
	return data, err == nil, err
}

// BlobHash is the git object id of a file holding data, to compare a work
// tree file with a commit's without reading the commit's copy.
func BlobHash(data []byte) string {
	return plumbing.ComputeHash(plumbing.BlobObject, data).String()
}

// FileHash is the git object id of rel at commit; "" when absent.
func (r *LocalRepo) FileHash(commit, rel string) (string, error) {
	c, err := r.repo.CommitObject(plumbing.NewHash(commit))
	if err != nil {
		return "", err
	}
	f, err := c.File(path.Clean(rel))
	if errors.Is(err, object.ErrFileNotFound) || errors.Is(err, object.ErrDirectoryNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return f.Hash.String(), nil
}

// RemoteURL is the first url of remote name in a git config file's bytes;
// "" when it has none or does not parse.
func RemoteURL(configData []byte, name string) string {
	cfg, err := config.ReadConfig(bytes.NewReader(configData))
	if err != nil || cfg.Remotes[name] == nil || len(cfg.Remotes[name].URLs) == 0 {
		return ""
	}
	return cfg.Remotes[name].URLs[0]
}
