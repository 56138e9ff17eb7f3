package engine

import (
	"context"
	"time"

	"github.com/agentpack/agentpack/engine/apply"
	"github.com/agentpack/agentpack/engine/plan"
	"github.com/agentpack/agentpack/internal/apperr"
	"github.com/agentpack/agentpack/internal/fsys"
	"github.com/agentpack/agentpack/snapshots"
)

// LockTimeout is how long a mutating command waits for another agentpack.
var LockTimeout = 10 * time.Second

// Store returns the snapshot store, on the engine's System (so a dry run
// records its state writes instead of making them).
func (e *Engine) Store() *snapshots.Store { return snapshots.NewStoreOn(e.Sys, abs(e.Env.StateDir())) }

// dryRun reports whether this engine only records what it would write.
func (e *Engine) dryRun() bool {
	_, ok := e.Sys.(*fsys.DryRunSystem)
	return ok
}

// WithLock runs fn holding the cross-process state lock, after rolling back
// any interrupted apply. The warnings of a recovery are returned. A dry run
// writes nothing, not even the lock file, so it takes no lock; its recovery
// is recorded like its other writes.
func (e *Engine) WithLock(ctx context.Context, command string, fn func(recovered []string) error) error {
	if e.dryRun() {
		// The recovery the real command would run first is recorded too, so
		// the dry run reports what the command would do after it.
		recovered, err := e.writer().Recover()
		if err != nil {
			return err
		}
		return fn(recovered)
	}
	release, err := snapshots.Lock(ctx, e.Env.StateDir(), command, 0)
	if apperr.CodeOf(err) == apperr.Locked {
		if e.OnLockWait != nil {
			e.OnLockWait(apperr.As(err).Message)
		}
		release, err = snapshots.Lock(ctx, e.Env.StateDir(), command, LockTimeout)
	}
	if err != nil {
		return err
	}
	e.locked = true
	defer func() {
		e.locked = false
		release()
	}()
	recovered, err := e.recoveryWriter().Recover()
	if err != nil {
		return err
	}
	return fn(recovered)
}

// recoverFirst rolls back an interrupted apply before a command that does
// not otherwise take the lock reads anything (SPEC §6: the next command,
// whatever it is, recovers first). It returns the recovery's warnings.
func (e *Engine) recoverFirst(ctx context.Context) ([]string, error) {
	if e.locked || e.inspectOnly {
		return nil, nil
	}
	if _, err := e.Sys.Stat(abs(e.Env.StateDir()).JoinName("journal.json")); err != nil {
		return nil, nil
	}
	var warnings []string
	err := e.WithLock(ctx, "recover", func(recovered []string) error {
		warnings = recovered
		return nil
	})
	return warnings, err
}

// ReadOnly makes this engine refuse every write (E_WRITE_DISABLED) but
// those of its caches (the git cache and the stat cache), which speed later
// commands up when they can be written and are never required. The one
// other write a read-only command makes is the recovery of an interrupted
// apply: SPEC §6 has the next command, whatever it is, roll it back first.
func (e *Engine) ReadOnly() {
	if _, ok := e.Sys.(*fsys.ReadOnlySystem); ok {
		return
	}
	e.Sys = fsys.NewReadOnlySystem(e.Sys, abs(e.Env.CacheDir()), plan.StatCachePath(abs(e.Env.StateDir())))
}

// recoveryWriter is the writer that rolls back an interrupted apply: the
// engine's own, or for a read-only engine one on the System beneath it.
func (e *Engine) recoveryWriter() *apply.Writer {
	w := e.writer()
	if ro, ok := e.Sys.(*fsys.ReadOnlySystem); ok {
		w.Sys = ro.Base()
		w.Store = snapshots.NewStoreOn(ro.Base(), abs(e.Env.StateDir()))
	}
	return w
}

// writer is the [apply.Writer] of this engine: its System, its state
// folder, and the recovery mode and checkpoints of the command running.
func (e *Engine) writer() *apply.Writer {
	return &apply.Writer{Sys: e.Sys, Store: e.Store(), BestEffort: e.recoverBestEffort, Checkpoint: e.checkpoint}
}
