package main

import (
	"errors"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/rogpeppe/go-internal/testscript"
)

// gitcommit DIR [VAR]: make DIR a git repository (go-git, no git binary)
// if it is not one, stage every change of its work tree (new, modified and
// deleted files) and commit it. Author and time are fixed, so the same
// content always gives the same commit id. With VAR, the commit id is put in
// the environment variable VAR.
func cmdGitCommit(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: gitcommit dir [var]")
	}
	dir := ts.MkAbs(args[0])
	repo, err := git.PlainOpen(dir)
	if errors.Is(err, git.ErrRepositoryNotExists) {
		repo, err = git.PlainInit(dir, false)
	}
	ts.Check(err)
	wt, err := repo.Worktree()
	ts.Check(err)
	ts.Check(wt.AddWithOptions(&git.AddOptions{All: true}))
	sig := &object.Signature{Name: "agentpack test", Email: "test@agentpack.invalid", When: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	h, err := wt.Commit("commit", &git.CommitOptions{All: true, Author: sig, Committer: sig})
	ts.Check(err)
	if len(args) == 2 {
		ts.Setenv(args[1], h.String())
	}
}

// gitshow DIR BRANCH PATH: print PATH as branch BRANCH of the repository
// DIR has it (go-git).
func cmdGitShow(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 {
		ts.Fatalf("usage: gitshow dir branch path")
	}
	repo, err := git.PlainOpen(ts.MkAbs(args[0]))
	ts.Check(err)
	ref, err := repo.Reference(plumbing.NewBranchReferenceName(args[1]), true)
	if neg {
		if err == nil {
			c, cerr := repo.CommitObject(ref.Hash())
			ts.Check(cerr)
			if _, ferr := c.File(args[2]); ferr == nil {
				ts.Fatalf("branch %s has %s", args[1], args[2])
			}
		}
		return
	}
	ts.Check(err)
	c, err := repo.CommitObject(ref.Hash())
	ts.Check(err)
	f, err := c.File(args[2])
	ts.Check(err)
	text, err := f.Contents()
	ts.Check(err)
	_, _ = ts.Stdout().Write([]byte(text))
}

// gitbranch DIR: print the branch checked out in DIR and the subject of
// its commit, one per line.
func cmdGitBranch(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: gitbranch dir")
	}
	repo, err := git.PlainOpen(ts.MkAbs(args[0]))
	ts.Check(err)
	head, err := repo.Head()
	ts.Check(err)
	c, err := repo.CommitObject(head.Hash())
	ts.Check(err)
	_, _ = ts.Stdout().Write([]byte(head.Name().Short() + "\n" + c.Message))
}

// gitcheckout DIR BRANCH: check BRANCH out in DIR (go-git).
func cmdGitCheckout(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: gitcheckout dir branch")
	}
	repo, err := git.PlainOpen(ts.MkAbs(args[0]))
	ts.Check(err)
	wt, err := repo.Worktree()
	ts.Check(err)
	ts.Check(wt.Checkout(&git.CheckoutOptions{Branch: plumbing.NewBranchReferenceName(args[1])}))
}
