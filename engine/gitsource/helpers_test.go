package gitsource

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

func init() { initialBackoff = time.Millisecond }

var sig = &object.Signature{Name: "Test", Email: "test@example.com", When: time.Unix(1700000000, 0).UTC()}

// upstream is a local repository built with go-git, standing in for a remote.
type upstream struct {
	t    *testing.T
	dir  string
	repo *git.Repository
}

func newUpstream(t *testing.T) *upstream {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "upstream")
	repo, err := git.PlainInitWithOptions(dir, &git.PlainInitOptions{InitOptions: git.InitOptions{DefaultBranch: plumbing.Main}})
	if err != nil {
		t.Fatal(err)
	}
	return &upstream{t: t, dir: dir, repo: repo}
}

// commit writes files (an empty body deletes the file) and commits them on
// the current branch.
func (u *upstream) commit(msg string, files map[string]string) plumbing.Hash {
	u.t.Helper()
	wt, err := u.repo.Worktree()
	if err != nil {
		u.t.Fatal(err)
	}
	for rel, body := range files {
		p := filepath.Join(u.dir, filepath.FromSlash(rel))
		if body == "" {
			if _, err := wt.Remove(rel); err != nil {
				u.t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			u.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			u.t.Fatal(err)
		}
		if _, err := wt.Add(rel); err != nil {
			u.t.Fatal(err)
		}
	}
	h, err := wt.Commit(msg, &git.CommitOptions{Author: sig, Committer: sig, AllowEmptyCommits: true})
	if err != nil {
		u.t.Fatal(err)
	}
	return h
}

// addRaw stages a file or symlink already written under the work tree.
func (u *upstream) addRaw(rel string) {
	u.t.Helper()
	wt, _ := u.repo.Worktree()
	if _, err := wt.Add(rel); err != nil {
		u.t.Fatal(err)
	}
}

func (u *upstream) branch(name string, h plumbing.Hash) {
	u.t.Helper()
	if err := u.repo.Storer.SetReference(plumbing.NewHashReference(plumbing.NewBranchReferenceName(name), h)); err != nil {
		u.t.Fatal(err)
	}
}

func (u *upstream) lightTag(name string, h plumbing.Hash) {
	u.t.Helper()
	if _, err := u.repo.CreateTag(name, h, nil); err != nil {
		u.t.Fatal(err)
	}
}

func (u *upstream) annotatedTag(name string, h plumbing.Hash) plumbing.Hash {
	u.t.Helper()
	ref, err := u.repo.CreateTag(name, h, &git.CreateTagOptions{Tagger: sig, Message: "release " + name})
	if err != nil {
		u.t.Fatal(err)
	}
	return ref.Hash()
}

func (u *upstream) url() string { return "file://" + filepath.ToSlash(u.dir) }

func readFile(t *testing.T, dir, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func entries(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dir {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return out
}
