package snapshots

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/gofrs/flock"
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
func Lock(ctx context.Context, stateDir, command string, timeout time.Duration) (release func(), err error) {
	if err := ensureDir(stateDir); err != nil {
		return nil, err
	}
	fl := flock.New(filepath.Join(stateDir, "lock"))
	ok, err := fl.TryLock()
	if err == nil && !ok && timeout > 0 {
		wctx, cancel := context.WithTimeout(ctx, timeout)
		ok, err = fl.TryLockContext(wctx, lockPoll)
		cancel()
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			return nil, lockedError(stateDir)
		}
	}
	if err != nil {
		return nil, ioError(err, "cannot lock %s", fl.Path())
	}
	if !ok {
		return nil, lockedError(stateDir)
	}
	holderPath := filepath.Join(stateDir, "lock.holder")
	h := Holder{PID: os.Getpid(), Command: command, Since: time.Now().UTC()}
	data, _ := json.Marshal(h)
	if err := writeFileAtomic(holderPath, append(data, '\n'), filePerm, false); err != nil {
		_ = fl.Unlock()
		return nil, ioError(err, "cannot write %s", holderPath)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			// Remove the holder first: once unlocked, the next holder owns the file.
			_ = os.Remove(holderPath)
			_ = fl.Unlock()
		})
	}, nil
}

// ReadHolder returns who holds the lock of stateDir, as last recorded. It is
// nil when nobody recorded a hold; the record may be stale if a holder
// crashed, since the kernel drops the flock but not the file.
func ReadHolder(stateDir string) (*Holder, error) {
	data, err := os.ReadFile(filepath.Join(stateDir, "lock.holder"))
	if errors.Is(err, os.ErrNotExist) {
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
func lockedError(stateDir string) *apperr.Error {
	h, _ := ReadHolder(stateDir)
	who := "another agentpack"
	if h != nil {
		who = fmt.Sprintf("another agentpack (pid %d, `%s`)", h.PID, h.Command)
	}
	e := apperr.New(apperr.Locked, "%s holds the lock", who).
		WithHint("wait for it to finish, then retry; the lock is %s", filepath.Join(stateDir, "lock")).
		With("lock_path", filepath.Join(stateDir, "lock"))
	if h != nil {
		e = e.With("pid", h.PID).With("command", h.Command).With("since", h.Since)
	}
	return e
}
