package snapshots

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"time"

	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
)

// lockPoll is how often Lock retries a held lock.
const lockPoll = 50 * time.Millisecond

// Holder says who holds the state lock; it is kept in <stateDir>/lock.holder
// while the lock is held so a waiting process can name it.
type Holder struct {
	PID     int       `json:"pid"`
	Command string    `json:"command"`
	Since   time.Time `json:"since"`
}

// Lock takes the exclusive cross-process flock on <stateDir>/lock (creating
// the folder), retrying until timeout passes or ctx ends; timeout <= 0 tries
// once. On success it records a [Holder] in <stateDir>/lock.holder and
// returns a release func (safe to call more than once) that removes
// lock.holder and unlocks. The lock file itself is never removed: removing a
// flock file lets two processes lock different inodes.
//
// Two Lock calls in one process exclude each other too, since each opens its
// own file description. On timeout the error is E_LOCKED naming the holder's
// pid and command, with details pid, command and since.
//
// The lock guards the real disk against other processes, so Lock works on
// the real disk only; the flock itself is [fsys.TryLock].
func Lock(ctx context.Context, stateDir, command string, timeout time.Duration) (release func(), err error) {
	sys, dir := stateSystem(), stateDirPath(stateDir)
	if err := ensureDir(sys, dir); err != nil {
		return nil, err
	}
	unlock, err := waitLock(ctx, dir.JoinName("lock"), timeout)
	if err != nil {
		return nil, err
	}
	if unlock == nil {
		return nil, lockedError(sys, dir)
	}
	holderPath := dir.JoinName("lock.holder")
	h := Holder{PID: os.Getpid(), Command: command, Since: time.Now().UTC()}
	data, _ := json.Marshal(h)
	if err := writeFile(sys, holderPath, append(data, '\n')); err != nil {
		_ = unlock()
		return nil, err
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			// Remove the holder first: once unlocked, the next holder owns the file.
			_ = sys.Remove(holderPath)
			_ = unlock()
		})
	}, nil
}

// waitLock tries the flock on path every lockPoll until it gets it, timeout
// passes or ctx ends; timeout <= 0 tries once. A nil unlock with a nil error
// means someone else kept the lock.
func waitLock(ctx context.Context, path fsys.AbsPath, timeout time.Duration) (unlock func() error, err error) {
	unlock, ok, err := fsys.TryLock(path)
	if err != nil || ok || timeout <= 0 {
		return unlock, err
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(lockPoll)
	defer tick.Stop()
	for {
		select {
		case <-wctx.Done():
			return nil, nil
		case <-tick.C:
		}
		if unlock, ok, err = fsys.TryLock(path); err != nil || ok {
			return unlock, err
		}
	}
}

// ReadHolder returns who holds the lock of stateDir, as last recorded. It is
// nil when nobody recorded a hold; the record may be stale if a holder
// crashed, since the kernel drops the flock but not the file.
func ReadHolder(stateDir string) (*Holder, error) {
	return readHolder(stateSystem(), stateDirPath(stateDir))
}

func readHolder(sys fsys.System, dir fsys.AbsPath) (*Holder, error) {
	data, err := sys.ReadFile(dir.JoinName("lock.holder"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var h Holder
	if err := json.Unmarshal(data, &h); err != nil {
		return nil, err
	}
	return &h, nil
}

// lockedError builds E_LOCKED, naming the holder when lock.holder says who.
func lockedError(sys fsys.System, dir fsys.AbsPath) *apperr.Error {
	h, _ := readHolder(sys, dir)
	who := "another agentpack"
	if h != nil {
		who = fmt.Sprintf("another agentpack (pid %d, `%s`)", h.PID, h.Command)
	}
	lockPath := dir.JoinName("lock")
	e := apperr.New(apperr.Locked, "%s holds the lock", who).
		WithHint("wait for it to finish, then retry; the lock is %s", lockPath).
		With("lock_path", lockPath.String())
	if h != nil {
		e = e.With("pid", h.PID).With("command", h.Command).With("since", h.Since)
	}
	return e
}
