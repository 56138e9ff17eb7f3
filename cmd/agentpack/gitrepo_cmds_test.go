package main

import (
	"errors"
	"time"

	"github.com/go-git/go-git/v5"
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
