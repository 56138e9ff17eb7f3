package engine_test

import (
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentpack/agentpack/engine"
	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/agentpack/agentpack/targets"
)

// agedStats shows every file's modification and change times an hour
// earlier than they are, so files just written are not too recent for the
// stat cache (git's racy-clean rule), and lists the files read through it.
type agedStats struct {
	fsys.System
	mu   *sync.Mutex
	read *[]string
}

func (a agedStats) Lstat(p fsys.AbsPath) (fs.FileInfo, error) {
	fi, err := a.System.Lstat(p)
	return shifted(fi, err, -time.Hour)
}

func (a agedStats) ReadFile(p fsys.AbsPath) ([]byte, error) {
	noteRead(a.mu, a.read, p)
	return a.System.ReadFile(p)
}

// noteRead adds p to read.
func noteRead(mu *sync.Mutex, read *[]string, p fsys.AbsPath) {
	mu.Lock()
	*read = append(*read, p.String())
	mu.Unlock()
}

// shifted is a stat's answer with the file's times moved by by.
func shifted(fi fs.FileInfo, err error, by time.Duration) (fs.FileInfo, error) {
	if err != nil {
		return fi, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fi, nil
	}
	moved := *st
	moved.Ctim = syscall.NsecToTimespec(st.Ctim.Nano() + int64(by))
	moved.Mtim = syscall.NsecToTimespec(st.Mtim.Nano() + int64(by))
	return shiftedInfo{fi, &moved, by}, nil
}

type shiftedInfo struct {
	fs.FileInfo
	st *syscall.Stat_t
	by time.Duration
}

func (i shiftedInfo) ModTime() time.Time { return i.FileInfo.ModTime().Add(i.by) }
func (i shiftedInfo) Sys() any           { return i.st }

// TestDeployRecordsWrittenFilesInStatCache: a deploy records the stat
// data and hash of every file it writes in the stat cache, so the status
// after it vouches for them from one stat each and reads none of them.
// (Files the deploy writes are as new as can be: agedStats makes them look
// old enough to be recorded.)
func TestDeployRecordsWrittenFilesInStatCache(t *testing.T) {
	var mu sync.Mutex
	var read []string
	deployThenStatus(t, &read, func(sys fsys.System) fsys.System {
		return agedStats{System: sys, mu: &mu, read: &read}
	}, nil)
}

// deployThenStatus deploys a repo with one skill through the System wrap
// makes of the engine's, checks each file written with wrote (when set),
// then runs status the same way and fails on any file the deploy wrote
// that the status read (wrap's System lists them in read).
func deployThenStatus(t *testing.T, read *[]string, wrap func(fsys.System) fsys.System, wrote func(path string)) {
	t.Helper()
	for _, p := range statusRereads(t, read, wrap, wrote) {
		t.Errorf("status read %s, which the deploy just wrote (its stat cache entry is missing or is not what a look sees)", p)
	}
}

// statusRereads is the files besides AGENTS.md that the deploy of
// deployThenStatus wrote and the status after it read.
func statusRereads(t *testing.T, read *[]string, wrap func(fsys.System) fsys.System, wrote func(path string)) []string {
	t.Helper()
	env := testEnv(t)
	req := engine.Request{Repo: codexRepo(t)}
	newEngine := func() *engine.Engine {
		e := engine.New(env, targets.NewSet())
		e.Sys = wrap(e.Sys)
		return e
	}
	_, res, err := newEngine().Deploy(context.Background(), req, true, engine.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	written := map[string]bool{}
	for _, c := range res.Changes {
		// AGENTS.md gathers the agentpack blocks of instructions: status
		// reads it for them, whatever the cache says of the whole file.
		if c.Path.Base() != "AGENTS.md" {
			written[c.Path.String()] = true
			if wrote != nil {
				wrote(c.Path.String())
			}
		}
	}
	if len(written) != 2 {
		t.Fatalf("the deploy wrote %d files besides AGENTS.md, want the skill's 2", len(written))
	}
	*read = nil
	if _, _, err := newEngine().Status(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	var reread []string
	for _, p := range *read {
		if written[p] {
			reread = append(reread, p)
		}
	}
	return reread
}

// placedAged is agedStats whose writes tell the stat data they placed
// ([fsys.StatWriter]), aged the same way, and which lists the written
// files looked at again after their write.
type placedAged struct {
	agedStats
	wrote, lookedAgain map[string]bool
}

func (a placedAged) WriteFileStat(p fsys.AbsPath, data []byte, perm fs.FileMode, create bool) (fsys.Placed, error) {
	d, err := fsys.WriteFileStat(a.System, p, data, perm, create)
	if d.Stat.Ino != 0 {
		d.Stat.MtimeNS -= int64(time.Hour)
		d.Stat.CtimeNS -= int64(time.Hour)
	}
	a.mu.Lock()
	a.wrote[p.String()] = true
	a.mu.Unlock()
	return d, err
}

func (a placedAged) Lstat(p fsys.AbsPath) (fs.FileInfo, error) {
	a.mu.Lock()
	if a.wrote[p.String()] {
		a.lookedAgain[p.String()] = true
	}
	a.mu.Unlock()
	return a.agedStats.Lstat(p)
}

// TestDeployRecordsTheStatDataItsWritesPlaced: where the System's writes
// tell the stat data of the file they placed, the deploy records those in
// the stat cache without looking at the files again, and they are what a
// later look sees: the status after it reads none of them.
func TestDeployRecordsTheStatDataItsWritesPlaced(t *testing.T) {
	var mu sync.Mutex
	var read []string
	sys := placedAged{wrote: map[string]bool{}, lookedAgain: map[string]bool{}}
	deployThenStatus(t, &read, func(base fsys.System) fsys.System {
		sys.agedStats = agedStats{System: base, mu: &mu, read: &read}
		return sys
	}, func(path string) {
		if !sys.wrote[path] {
			t.Fatalf("%s was not written through WriteFileStat", path)
		}
		if sys.lookedAgain[path] {
			t.Errorf("the deploy looked at %s again after writing it", path)
		}
	})
}

// freshStats shows every file's times an hour ahead, so whatever a deploy
// writes stays too recent for the stat cache's racy window however slow
// the machine; its writes tell the stat data they placed, shifted the
// same way, and say they are distinct ([fsys.Placed.Distinct]) unless
// coarse names the file.
type freshStats struct {
	fsys.System
	mu     *sync.Mutex
	read   *[]string
	coarse string
}

func (f freshStats) Lstat(p fsys.AbsPath) (fs.FileInfo, error) {
	fi, err := f.System.Lstat(p)
	return shifted(fi, err, time.Hour)
}

func (f freshStats) Stat(p fsys.AbsPath) (fs.FileInfo, error) {
	fi, err := f.System.Stat(p)
	return shifted(fi, err, time.Hour)
}

func (f freshStats) ReadFile(p fsys.AbsPath) ([]byte, error) {
	noteRead(f.mu, f.read, p)
	return f.System.ReadFile(p)
}

func (f freshStats) WriteFileStat(p fsys.AbsPath, data []byte, perm fs.FileMode, create bool) (fsys.Placed, error) {
	d, err := fsys.WriteFileStat(f.System, p, data, perm, create)
	return f.ahead(p, d), err
}

func (f freshStats) WriteStreamStat(p fsys.AbsPath, perm fs.FileMode, write func(io.Writer) error) (fsys.Placed, error) {
	d, err := fsys.WriteStreamStat(f.System, p, perm, write)
	return f.ahead(p, d), err
}

// ahead is d as freshStats shows it.
func (f freshStats) ahead(p fsys.AbsPath, d fsys.Placed) fsys.Placed {
	if d.Stat.Ino != 0 {
		d.Stat.MtimeNS += int64(time.Hour)
		d.Stat.CtimeNS += int64(time.Hour)
		d.Distinct = p.Base() != f.coarse
	}
	return d
}

// TestDeployTrustsDistinctStatDataAtOnce: when every write of a deploy
// tells distinct stat data, the stat cache records the files and the
// decoded target manifests however recent they are, and the status right
// after the deploy reads none of them; when one write does not (a coarse
// clock), none is trusted while recent, and the status reads them all.
func TestDeployTrustsDistinctStatDataAtOnce(t *testing.T) {
	for _, coarse := range []string{"", "SKILL.md"} {
		var mu sync.Mutex
		var read []string
		reread := statusRereads(t, &read, func(sys fsys.System) fsys.System {
			return freshStats{System: sys, mu: &mu, read: &read, coarse: coarse}
		}, nil)
		var manifests []string
		for _, p := range read {
			if _, err := os.Stat(p); err == nil && strings.HasPrefix(filepath.Base(p), ".agentpack.manifest.") {
				manifests = append(manifests, p) // one the deploy wrote, not a root's missing one
			}
		}
		switch {
		case coarse == "" && len(reread)+len(manifests) != 0:
			t.Errorf("every write distinct: status read %v and manifests %v, which the deploy had just written", reread, manifests)
		case coarse != "" && (len(reread) != 2 || len(manifests) == 0):
			t.Errorf("one write not distinct: status read %v of the deploy's files and manifests %v, want both skill files and the manifests (none trusted while recent)", reread, manifests)
		}
	}
}

// TestRollbackRecordsRestoredFilesInStatCache: a rollback records the
// files it puts back as a deploy records those it writes, so the status
// after it reads none of them; when one of its writes cannot tell
// distinct stat data, none is trusted while recent and the status reads
// them all.
func TestRollbackRecordsRestoredFilesInStatCache(t *testing.T) {
	for _, coarse := range []string{"", "SKILL.md"} {
		var mu sync.Mutex
		var read []string
		env := testEnv(t)
		repo := codexRepo(t)
		req := engine.Request{Repo: repo}
		newEngine := func() *engine.Engine {
			e := engine.New(env, targets.NewSet())
			e.Sys = freshStats{System: e.Sys, mu: &mu, read: &read, coarse: coarse}
			return e
		}
		ctx := context.Background()
		if _, _, err := newEngine().Deploy(ctx, req, true, engine.ApplyOptions{}); err != nil {
			t.Fatal(err)
		}
		mustWrite(t, filepath.Join(repo, "modules/s/SKILL.md"), "---\nname: s\ndescription: d\n---\nbody 2\n")
		mustWrite(t, filepath.Join(repo, "modules/s/extra.txt"), "x 2\n")
		if _, _, err := newEngine().Deploy(ctx, req, true, engine.ApplyOptions{}); err != nil {
			t.Fatal(err)
		}
		rb, _, err := newEngine().Rollback(ctx, engine.RollbackOptions{Last: true})
		if err != nil {
			t.Fatal(err)
		}
		restored := map[string]bool{}
		for _, f := range rb.Files {
			if base := filepath.Base(f.Path); base == "SKILL.md" || base == "extra.txt" {
				restored[f.Path] = true
			}
		}
		if len(restored) != 2 {
			t.Fatalf("the rollback restored %v, want the skill's 2 files", rb.Files)
		}
		// The repo as it was: what the status plans is in sync, so it
		// reads a deployed file only to hash it.
		mustWrite(t, filepath.Join(repo, "modules/s/SKILL.md"), "---\nname: s\ndescription: d\n---\nbody\n")
		mustWrite(t, filepath.Join(repo, "modules/s/extra.txt"), "x\n")
		read = nil
		_, st, err := newEngine().Status(ctx, engine.Request{Repo: repo}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(st.Drift) != 0 {
			t.Fatalf("status after the rollback: %+v, want no drift", st.Drift)
		}
		var reread []string
		for _, p := range read {
			if restored[p] {
				reread = append(reread, p)
			}
		}
		switch {
		case coarse == "" && len(reread) != 0:
			t.Errorf("every write distinct: status read %v, which the rollback had just put back", reread)
		case coarse != "" && len(reread) != 2:
			t.Errorf("one write not distinct: status read %v of the restored files, want both (none trusted while recent)", reread)
		}
	}
}
