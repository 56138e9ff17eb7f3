package engine_test

import (
	"context"
	"io/fs"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/internal/fsys"
)

// oneSecond is a System that shows path with an inode and whole-second
// times, both one second long past: a file system that keeps inodes and
// no sub-second times (HFS+), on which a write and an edit of the same
// size within one second have the same stat data.
type oneSecond struct {
	fsys.System
	path string
	at   time.Time
}

func (c oneSecond) Lstat(p fsys.AbsPath) (fs.FileInfo, error) {
	fi, err := c.System.Lstat(p)
	if err != nil || p.String() != c.path {
		return fi, err
	}
	return secondInfo{fi, c.at}, nil
}

type secondInfo struct {
	fs.FileInfo
	at time.Time
}

func (i secondInfo) ModTime() time.Time { return i.at }

func (i secondInfo) Sys() any {
	st, ok := i.FileInfo.Sys().(*syscall.Stat_t)
	if !ok {
		return i.FileInfo.Sys()
	}
	c := *st
	c.Mtim = syscall.NsecToTimespec(i.at.UnixNano())
	c.Ctim = c.Mtim
	return &c
}

// On a file system with whole-second times, the stat data taken right
// after a deploy writes a file says nothing about an edit made within the
// same second: the stat cache does not record it, and the next status
// reads the file and reports the edit.
func TestEditInTheSecondOfTheWriteIsSeen(t *testing.T) {
	env, e, req, repo := deployedCodexRepo(t)
	ctx := context.Background()
	extra := filepath.Join(env.Cwd, ".agents/skills/s/extra.txt")
	mustWrite(t, filepath.Join(repo, "modules/s/extra.txt"), "x2\n")
	e.Sys = oneSecond{e.Sys, extra, time.Now().Add(-10 * time.Second).Truncate(time.Second)}
	if _, _, err := e.Deploy(ctx, req, true, engine.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, extra, "y2\n") // the same size, the same (whole) second
	_, s, err := e.Status(ctx, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range s.Drift {
		if d.Path.String() == extra {
			return
		}
	}
	t.Errorf("status reports no drift of %s after an edit: %+v", extra, s.Drift)
}
